import type { Location } from "#shared/routing/model";
import type { ElementsBudget, TravelFailureKind } from "#shared/domain/travel/road-matrix";
import { TravelSourceError } from "#shared/domain/travel/road-matrix";

/**
 * Road geometry of a plan's routes (no I/O here: the engine is a port): after solving, each route's waypoints
 * (its start, its stops, its end when it drives back) are asked of the engine's route service, in requests of at
 * most `maxWaypoints`, and the line it answers is cut at the waypoints into one line per leg, simplified and
 * stored as encoded polylines (precision 5, the format OSRM answers with `geometries=polyline`).
 *
 * Metered like the matrix: a request of w waypoints asks w − 1 origin → destination pairs, counted as travel
 * elements, reserved on the plan's cap before anything is asked and settled with what was answered. Bounded in
 * time (`deadline`: no request starts after it, every timeout is cut to it) and in size (`maxPoints` over all
 * routes: the simplification tolerance doubles until the lines fit). A failure leaves the routes not yet answered
 * without geometry (drawn straight) and says why in words a tenant may see; the detail is for the logs.
 */
export interface RouteGeometrySource {
  readonly kind: string;
  /** Most waypoints of one request. */
  readonly maxWaypoints: number;
  readonly concurrency: number;
  readonly timeoutMs: number;
  readonly retries: number;
  /** The road line through `waypoints`, one line per leg (legs.length = waypoints.length − 1). */
  route(waypoints: readonly Location[], signal: AbortSignal): Promise<Location[][]>;
}

export interface GeometryRoute {
  vehicleId: string;
  /** Start, stops in order, and the end when the route drives back. */
  waypoints: Location[];
}

export interface RoadGeometryInput {
  routes: readonly GeometryRoute[];
  source: RouteGeometrySource;
  /** Epoch ms (on `clock`) after which nothing is asked any more. */
  deadline: number;
  clock?: () => number;
  elementsBudget?: ElementsBudget;
  /** Points stored over all routes at most (default 20,000: about 100 KB of encoded polylines). */
  maxPoints?: number;
  sleep?: (ms: number) => Promise<void>;
}

export interface RoadGeometry {
  /** Per vehicle whose every request was answered: one encoded polyline per leg. */
  legsByVehicle: Map<string, string[]>;
  requests: number;
  /** Elements (legs) asked and answered: what was charged. */
  elementsRequested: number;
  /** Why some or all routes have no road geometry (tenant-safe); undefined when all have it. */
  failure?: string;
  /** The failure's detail, for the logs only. */
  detail?: string;
}

export const DEFAULT_MAX_GEOMETRY_POINTS = 20_000;
/** The first simplification tolerance, metres: below what a printed map shows. */
const FIRST_TOLERANCE_METRES = 5;

const failureWords: Record<TravelFailureKind, string> = {
  timeout: "did not answer in time",
  unreachable: "could not be reached",
  badAnswer: "gave an unusable answer",
  refused: "refused a request",
};

interface Request {
  route: number;
  /** Index of the first waypoint of the route this request covers. */
  from: number;
  waypoints: Location[];
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function fetchRoadGeometry(input: RoadGeometryInput): Promise<RoadGeometry> {
  const { source } = input;
  const clock = input.clock ?? Date.now;
  const requests: Request[] = [];
  input.routes.forEach((route, r) => {
    // Consecutive requests share their boundary waypoint, so every leg is in exactly one request.
    for (let from = 0; from < route.waypoints.length - 1; from += source.maxWaypoints - 1) {
      requests.push({ route: r, from, waypoints: route.waypoints.slice(from, from + source.maxWaypoints) });
    }
  });
  const outcome: RoadGeometry = { legsByVehicle: new Map(), requests: 0, elementsRequested: 0 };
  const elements = requests.reduce((sum, request) => sum + request.waypoints.length - 1, 0);
  if (elements === 0) return outcome;
  if (clock() >= input.deadline) return { ...outcome, failure: "Road geometry was skipped: no time was left in the run's budget." };
  const refused = await input.elementsBudget?.reserve(elements);
  if (refused) return { ...outcome, failure: `Road geometry was skipped: ${refused}` };

  const legs: Array<Location[][]> = input.routes.map((route) => new Array(route.waypoints.length - 1));
  const answered = input.routes.map(() => 0);
  let next = 0;
  let failure: { message: string; detail: string } | undefined;
  const worker = async () => {
    while (!failure && next < requests.length) {
      const request = requests[next++]!;
      try {
        outcome.requests += 1;
        const lines = await askWithRetries(source, request.waypoints, input.deadline, clock, input.sleep ?? defaultSleep);
        lines.forEach((line, k) => {
          legs[request.route]![request.from + k] = line;
        });
        answered[request.route] = (answered[request.route] ?? 0) + lines.length;
        outcome.elementsRequested += lines.length;
      } catch (error) {
        failure ??=
          error instanceof GeometryFailure
            ? error
            : { message: `The ${source.kind} route service failed.`, detail: error instanceof Error ? error.message : String(error) };
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(source.concurrency, requests.length) }, worker));
  } finally {
    await input.elementsBudget?.settle(elements, outcome.elementsRequested);
  }
  const complete = input.routes.flatMap((route, r) => (answered[r] === route.waypoints.length - 1 ? [r] : []));
  const simplified = simplifyWithin(
    complete.map((r) => legs[r]!),
    input.maxPoints ?? DEFAULT_MAX_GEOMETRY_POINTS,
  );
  complete.forEach((r, i) => {
    outcome.legsByVehicle.set(
      input.routes[r]!.vehicleId,
      simplified[i]!.map((line) => encodePolyline(line)),
    );
  });
  if (failure) {
    const missing = input.routes.length - complete.length;
    outcome.failure = `${failure.message} ${missing} of ${input.routes.length} route${input.routes.length > 1 ? "s are" : " is"} drawn straight.`;
    outcome.detail = failure.detail;
  }
  return outcome;
}

class GeometryFailure extends Error {
  constructor(
    message: string,
    readonly detail: string,
  ) {
    super(message);
  }
}

async function askWithRetries(
  source: RouteGeometrySource,
  waypoints: Location[],
  deadline: number,
  clock: () => number,
  sleep: (ms: number) => Promise<void>,
): Promise<Location[][]> {
  let kind: TravelFailureKind = "badAnswer";
  let last = "";
  for (let attempt = 0; attempt <= source.retries; attempt++) {
    if (attempt > 0) await sleep(Math.min(200 * 2 ** (attempt - 1), Math.max(0, deadline - clock())));
    const left = deadline - clock();
    if (left <= 0) break;
    const timeoutMs = Math.max(1, Math.min(source.timeoutMs, Math.ceil(left)));
    try {
      const lines = await source.route(waypoints, AbortSignal.timeout(timeoutMs));
      if (lines.length !== waypoints.length - 1 || lines.some((line) => !Array.isArray(line) || line.length < 2))
        throw new TravelSourceError(`expected ${waypoints.length - 1} legs of 2 or more points`, true, "badAnswer");
      return lines;
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
      kind = timedOut ? "timeout" : error instanceof TravelSourceError ? error.kind : "badAnswer";
      last = timedOut ? `no answer within ${timeoutMs} ms` : error instanceof Error ? error.message : String(error);
      if (!timedOut && error instanceof TravelSourceError && !error.retryable) break;
    }
  }
  if (!last) throw new GeometryFailure(`The ${source.kind} route service gave no answer within the run's time budget.`, "deadline reached");
  throw new GeometryFailure(`The ${source.kind} route service ${failureWords[kind]}.`, `${source.kind} route: ${last}`);
}

/** Cuts a line through `waypoints` (each on or next to it, in order) into one line per leg. */
export function splitAtWaypoints(line: readonly Location[], waypoints: readonly Location[]): Location[][] {
  const cuts = [0];
  for (let k = 1; k < waypoints.length - 1; k++) {
    const previous = cuts.at(-1)!;
    let best = previous;
    let bestDistance = Infinity;
    for (let i = previous; i < line.length; i++) {
      const distance = metresBetween(line[i]!, waypoints[k]!);
      if (distance < bestDistance) {
        best = i;
        bestDistance = distance;
      }
      // The first point on the waypoint is the one: a later pass by the same place belongs to a later leg.
      if (distance <= 2) break;
    }
    cuts.push(best);
  }
  cuts.push(line.length - 1);
  const legs: Location[][] = [];
  for (let k = 0; k < cuts.length - 1; k++) {
    const leg = line.slice(cuts[k], cuts[k + 1]! + 1);
    legs.push(leg.length >= 2 ? leg : [waypoints[k]!, waypoints[k + 1]!]);
  }
  return legs;
}

/** Every route's legs simplified at the smallest tolerance (5 m, doubled each time) whose points fit in `maxPoints`. */
function simplifyWithin(routes: Location[][][], maxPoints: number): Location[][][] {
  let tolerance = FIRST_TOLERANCE_METRES;
  for (;;) {
    const simplified = routes.map((legs) => legs.map((line) => simplifyLine(line, tolerance)));
    const points = simplified.reduce((sum, legs) => sum + legs.reduce((s, line) => s + line.length, 0), 0);
    // Every leg keeps its two ends: below that no tolerance helps.
    if (points <= maxPoints || tolerance > 100_000) return simplified;
    tolerance *= 2;
  }
}

const METRES_PER_DEGREE = 111_320;

function metresBetween(a: Location, b: Location): number {
  const x = (b.lng - a.lng) * Math.cos((((a.lat + b.lat) / 2) * Math.PI) / 180);
  return Math.hypot(x, b.lat - a.lat) * METRES_PER_DEGREE;
}

/** Douglas–Peucker on a local equirectangular plane: the points whose removal moves the line by at most `toleranceMetres` go. */
export function simplifyLine(line: readonly Location[], toleranceMetres: number): Location[] {
  if (line.length <= 2) return [...line];
  const keep = new Uint8Array(line.length);
  keep[0] = 1;
  keep[line.length - 1] = 1;
  const stack: Array<[number, number]> = [[0, line.length - 1]];
  while (stack.length > 0) {
    const [first, last] = stack.pop()!;
    let farthest = -1;
    let farthestDistance = toleranceMetres;
    for (let i = first + 1; i < last; i++) {
      const distance = distanceToSegment(line[i]!, line[first]!, line[last]!);
      if (distance > farthestDistance) {
        farthest = i;
        farthestDistance = distance;
      }
    }
    if (farthest > 0) {
      keep[farthest] = 1;
      stack.push([first, farthest], [farthest, last]);
    }
  }
  return line.filter((_, i) => keep[i] === 1);
}

function distanceToSegment(point: Location, a: Location, b: Location): number {
  const shrink = Math.cos((a.lat * Math.PI) / 180);
  const [px, py] = [(point.lng - a.lng) * shrink, point.lat - a.lat];
  const [bx, by] = [(b.lng - a.lng) * shrink, b.lat - a.lat];
  const length = bx * bx + by * by;
  const t = length === 0 ? 0 : Math.max(0, Math.min(1, (px * bx + py * by) / length));
  return Math.hypot(px - t * bx, py - t * by) * METRES_PER_DEGREE;
}

/** Google's encoded polyline (latitude first), `precision` decimals. */
export function encodePolyline(points: readonly Location[], precision = 5): string {
  const factor = 10 ** precision;
  let out = "";
  let lastLat = 0;
  let lastLng = 0;
  const encode = (value: number) => {
    let v = value < 0 ? ~(value << 1) : value << 1;
    while (v >= 0x20) {
      out += String.fromCharCode((0x20 | (v & 0x1f)) + 63);
      v >>= 5;
    }
    out += String.fromCharCode(v + 63);
  };
  for (const point of points) {
    const lat = Math.round(point.lat * factor);
    const lng = Math.round(point.lng * factor);
    encode(lat - lastLat);
    encode(lng - lastLng);
    lastLat = lat;
    lastLng = lng;
  }
  return out;
}

/** The points of an encoded polyline; throws on a malformed one. */
export function decodePolyline(text: string, precision = 5): Location[] {
  const factor = 10 ** precision;
  const points: Location[] = [];
  let index = 0;
  let lat = 0;
  let lng = 0;
  const next = () => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (index >= text.length) throw new Error("a truncated polyline");
      const byte = text.charCodeAt(index++) - 63;
      if (byte < 0 || byte > 63) throw new Error("not a polyline");
      result |= (byte & 0x1f) << shift;
      shift += 5;
      if (byte < 0x20) break;
      if (shift > 30) throw new Error("not a polyline");
    }
    return result & 1 ? ~(result >> 1) : result >> 1;
  };
  while (index < text.length) {
    lat += next();
    lng += next();
    points.push({ lat: lat / factor, lng: lng / factor });
  }
  return points;
}
