// Why a visit was left out: after a solve, each visit the search dropped is tried against every vehicle's route
// (the routes of the solution, and an empty one for each vehicle left unused), at every position, with one
// constraint family relaxed at a time. The families whose relaxation alone lets it in somewhere are binding.
// An insertion evaluation, not a new solve: the routes stay as they are. Like check.ts it reads only the public
// model, so it shares no bug with the search it explains.
import { greatCircleTravel } from "./matrix.ts";
import type { DropReason, Location, RoutingProblem, RoutingSolution, RoutingVehicle, TravelProvider } from "./model.ts";

/**
 * Why a visit is not in the plan, stable and documented (docs/api/routing-runs.md). `lowPriority`: it would fit
 * on a route as it is, but serving it costs more than the objective pays (or the search met no plan with it).
 * `unexplained`: the explanation's hard time cap was reached before this visit was evaluated (a large day with many
 * drops); the visit was left out by the search all the same.
 */
export const dropReasonCodes = [
  "capacity",
  "timeWindow",
  "workingTime",
  "break",
  "maxVisits",
  "maxDistance",
  "maxDuration",
  "noCompatibleVehicle",
  "pickupDelivery",
  "badCoordinates",
  "lowPriority",
  "unexplained",
] as const;
export type DropReasonCode = (typeof dropReasonCodes)[number];

/** The constraint families an insertion can break (the reason codes a relaxation can name). */
type Family = "capacity" | "timeWindow" | "workingTime" | "break" | "maxVisits" | "maxDistance" | "maxDuration" | "noCompatibleVehicle";
/** Precedence among families that bind on as many vehicles. */
const FAMILY_ORDER: readonly Family[] = [
  "noCompatibleVehicle",
  "capacity",
  "maxVisits",
  "maxDistance",
  "maxDuration",
  "break",
  "timeWindow",
  "workingTime",
];

export interface DropExplanation {
  reasonCode: DropReasonCode;
  /** Binding codes, the reported one first (several when relaxing any one of them lets the visit in). */
  binding: DropReasonCode[];
  /** For `capacity`: the binding dimensions (indices into demand/capacity). */
  capacityDimensions: number[];
}

/** The code of a reason the solver gives before searching (its sentence is kept as it is). */
export function codeOfDropReason(reason: DropReason): DropReasonCode | undefined {
  switch (reason) {
    case "bad coordinates":
      return "badCoordinates";
    case "no vehicle with matching tags":
      return "noCompatibleVehicle";
    case "exceeds every vehicle's capacity":
      return "capacity";
    case "outside every working time":
      return "workingTime";
    case "pickup and delivery cannot both be served":
      return "pickupDelivery";
    case "could not be fitted":
      return undefined;
  }
}

const EPS = 1e-6;

interface Violations {
  families: Set<Family>;
  dims: Set<number>;
}

interface Options {
  /** True once the explanation should take the cheap path (breaks kept where the plan has them): its time is up. */
  hurry?: () => boolean;
  /**
   * The hard cap (ms, on `clock`): once reached, no further visit is evaluated and the visits the search dropped that
   * are not explained yet get `unexplained`. Checked before every route a visit is tried on, so it is overrun by at
   * most one route's evaluation. Default: none.
   */
  deadline?: number;
  /** The clock the deadline is read with (default `Date.now`). */
  clock?: () => number;
}

/** What a visit gets when the cap cut the explanation before it was evaluated. */
const UNEXPLAINED: DropExplanation = { reasonCode: "unexplained", binding: ["unexplained"], capacityDimensions: [] };

/**
 * Explains every dropped visit of `solution`. Visits dropped before the search get the code of their reason
 * (`capacity` with the dimensions every vehicle is too small in); visits the search dropped are evaluated.
 */
export function explainDropped(problem: RoutingProblem, solution: RoutingSolution, options: Options = {}): Map<string, DropExplanation> {
  const travel = problem.travel ?? greatCircleTravel();
  const visitIndex = new Map(problem.visits.map((visit, v) => [visit.id, v]));
  const partnerOf = new Map<number, number>();
  const pickups = new Set<number>();
  problem.visits.forEach((visit, v) => {
    if (visit.pickupVisitId === undefined) return;
    const p = visitIndex.get(visit.pickupVisitId);
    if (p === undefined) return;
    partnerOf.set(v, p).set(p, v);
    pickups.add(p);
  });
  const legs = new LegCache(travel);
  const routesByVehicle = new Map(solution.routes.map((route) => [route.vehicleId, route]));
  const plans = problem.vehicles.map((vehicle) => {
    const route = routesByVehicle.get(vehicle.id);
    const seq = route ? route.stops.map((stop) => visitIndex.get(stop.visitId)!).filter((v) => v !== undefined) : [];
    // Where the plan takes each break: after how many stops.
    const breakAt = (vehicle.breaks ?? []).map((_, b) => (route?.breaks[b] ? route.breaks[b]!.afterStop + 1 : 0));
    return { vehicle, seq, breakAt };
  });
  const deadline = options.deadline ?? Infinity;
  const clock = options.clock ?? Date.now;
  const context: Context = {
    problem,
    legs,
    pickups,
    partnerOf,
    hurry: options.hurry ?? (() => false),
    timeUp: deadline === Infinity ? () => false : () => clock() >= deadline,
  };

  const explanations = new Map<string, DropExplanation>();
  for (const dropped of solution.dropped) {
    const v = visitIndex.get(dropped.visitId);
    if (v === undefined) continue;
    const code = codeOfDropReason(dropped.reason);
    if (code !== undefined) {
      explanations.set(dropped.visitId, {
        reasonCode: code,
        binding: [code],
        capacityDimensions: code === "capacity" ? tooLargeDimensions(problem, v, partnerOf) : [],
      });
      continue;
    }
    if (explanations.has(dropped.visitId)) continue;
    const partner = partnerOf.get(v);
    const pairDropped = partner !== undefined && solution.dropped.some((entry) => entry.visitId === problem.visits[partner]!.id);
    const explanation = (!context.timeUp() && explainOne(context, plans, v, pairDropped ? partner : undefined)) || UNEXPLAINED;
    explanations.set(dropped.visitId, explanation);
    if (pairDropped) explanations.set(problem.visits[partner!]!.id, explanation);
  }
  return explanations;
}

interface Context {
  problem: RoutingProblem;
  legs: LegCache;
  pickups: Set<number>;
  partnerOf: Map<number, number>;
  hurry: () => boolean;
  /** The hard cap is reached: stop evaluating. */
  timeUp: () => boolean;
}

interface Plan {
  vehicle: RoutingVehicle;
  seq: number[];
  breakAt: number[];
}

/** The visit's explanation; undefined when the cap was reached before every route was tried. */
function explainOne(context: Context, plans: readonly Plan[], v: number, partner: number | undefined): DropExplanation | undefined {
  const vehiclesFixedBy = new Map<Family, number>();
  const dims = new Set<number>();
  const brokenAlone = new Map<Family, number>();
  let fits = false;
  let fitsWithoutPair = false;
  for (const plan of plans) {
    if (context.timeUp()) return undefined;
    const fixedHere = new Set<Family>();
    for (const seq of insertions(plan.seq, v, partner, context)) {
      const base = evaluate(context, plan, seq, null);
      if (base.families.size === 0) {
        fits = true;
        break;
      }
      for (const family of base.families) brokenAlone.set(family, (brokenAlone.get(family) ?? 0) + 1 / base.families.size);
      for (const family of base.families) {
        if (fixedHere.has(family)) continue;
        const relaxed = evaluate(context, plan, seq, family);
        if (relaxed.families.size === 0) {
          fixedHere.add(family);
          if (family === "capacity") for (const d of base.dims) dims.add(d);
        }
      }
    }
    if (fits) break;
    for (const family of fixedHere) vehiclesFixedBy.set(family, (vehiclesFixedBy.get(family) ?? 0) + 1);
    // A pair: would this visit fit alone (as an ordinary visit), its partner aside?
    if (partner !== undefined && !fitsWithoutPair) {
      for (const seq of insertions(plan.seq, v, undefined, context)) {
        if (evaluate(context, plan, seq, null, true).families.size === 0) {
          fitsWithoutPair = true;
          break;
        }
      }
    }
  }
  if (fits) return { reasonCode: "lowPriority", binding: ["lowPriority"], capacityDimensions: [] };
  const ranked = [...vehiclesFixedBy.entries()].sort((a, b) => b[1] - a[1] || FAMILY_ORDER.indexOf(a[0]) - FAMILY_ORDER.indexOf(b[0]));
  const binding: DropReasonCode[] = ranked.map(([family]) => family);
  if (fitsWithoutPair) binding.unshift("pickupDelivery");
  if (binding.length === 0) {
    // No single relaxation lets it in anywhere: the family broken most often.
    const most = [...brokenAlone.entries()].sort((a, b) => b[1] - a[1] || FAMILY_ORDER.indexOf(a[0]) - FAMILY_ORDER.indexOf(b[0]))[0];
    binding.push(most?.[0] ?? "noCompatibleVehicle");
    if (most?.[0] === "capacity") for (const d of capacityExcess(context, plans, v)) dims.add(d);
  }
  const reasonCode = binding[0]!;
  return { reasonCode, binding, capacityDimensions: binding.includes("capacity") ? [...dims].sort((a, b) => a - b) : [] };
}

/** Dimensions in which the visit's demand exceeds what a route has left, on some route. */
function capacityExcess(context: Context, plans: readonly Plan[], v: number): number[] {
  const dims = new Set<number>();
  for (const plan of plans) {
    const seq = [...plan.seq, v];
    for (const d of evaluate(context, plan, seq, "timeWindow").dims) dims.add(d);
  }
  return [...dims];
}

/** Dimensions in which a visit (a pair: its pickup's demand) is larger than some vehicle's capacity. */
function tooLargeDimensions(problem: RoutingProblem, v: number, partnerOf: Map<number, number>): number[] {
  const visit = problem.visits[v]!;
  const pickup = visit.pickupVisitId !== undefined && partnerOf.has(v) ? problem.visits[partnerOf.get(v)!]! : visit;
  const demand = pickup.demand ?? [];
  const dims: number[] = [];
  demand.forEach((q, d) => {
    if (problem.vehicles.every((vehicle) => q > (vehicle.capacity?.[d] ?? Infinity))) dims.push(d);
  });
  if (dims.length > 0) return dims;
  demand.forEach((q, d) => {
    if (problem.vehicles.some((vehicle) => q > (vehicle.capacity?.[d] ?? Infinity))) dims.push(d);
  });
  return dims;
}

/** Every sequence of `seq` with `v` inserted (and its partner after or before it, pickup first). */
function* insertions(seq: readonly number[], v: number, partner: number | undefined, context: Context): Generator<number[]> {
  if (partner === undefined) {
    for (let i = 0; i <= seq.length; i++) yield [...seq.slice(0, i), v, ...seq.slice(i)];
    return;
  }
  const [first, second] = context.pickups.has(v) ? [v, partner] : [partner, v];
  for (let i = 0; i <= seq.length; i++) {
    for (let j = i; j <= seq.length; j++) yield [...seq.slice(0, i), first, ...seq.slice(i, j), second, ...seq.slice(j)];
  }
}

/**
 * The families a route of `plan.vehicle` serving `seq` breaks, with `relaxed` ignored: its breaks taken at the
 * best of their positions (where the plan takes them, when hurried or with several breaks). `alone`: the visits
 * not in `plan.seq` are served as ordinary visits of no load (a pair's half without its partner).
 */
function evaluate(context: Context, plan: Plan, seq: readonly number[], relaxed: Family | null, alone = false): Violations {
  const breaks = plan.vehicle.breaks ?? [];
  if (breaks.length !== 1 || context.hurry()) {
    // Keep each break after the same stop as in the plan (shifted by the visits inserted before it).
    const breakAt = plan.breakAt.map((at) => shiftedPosition(plan.seq, seq, at));
    return simulate(context, plan, seq, breakAt, relaxed, alone);
  }
  // No placement works: every family some placement breaks is a candidate to relax.
  const union: Violations = { families: new Set(), dims: new Set() };
  for (let at = 0; at <= seq.length; at++) {
    const result = simulate(context, plan, seq, [at], relaxed, alone);
    if (result.families.size === 0) return result;
    for (const family of result.families) union.families.add(family);
    for (const d of result.dims) union.dims.add(d);
  }
  return union;
}

/** The position in `seq` after the stop that was the `at`-th in `original` (0: at the start). */
function shiftedPosition(original: readonly number[], seq: readonly number[], at: number): number {
  if (at === 0) return 0;
  const after = original[at - 1]!;
  return seq.indexOf(after) + 1;
}

function simulate(
  context: Context,
  plan: Plan,
  seq: readonly number[],
  breakAt: readonly number[],
  relaxed: Family | null,
  alone: boolean,
): Violations {
  const { problem, legs, pickups, partnerOf } = context;
  const vehicle = plan.vehicle;
  const families = new Set<Family>();
  const dims = new Set<number>();
  const broke = (family: Family) => {
    if (family !== relaxed) families.add(family);
  };
  const inserted = new Set(seq.filter((v) => !plan.seq.includes(v)));
  const speed = vehicle.speedKmh ?? 40;
  const tags = new Set(vehicle.tags ?? []);
  for (const v of inserted) for (const tag of problem.visits[v]!.requiredTags ?? []) if (!tags.has(tag)) broke("noCompatibleVehicle");
  if (seq.length > (vehicle.maxVisits ?? Infinity)) broke("maxVisits");

  // Capacity: ordinary visits load at the start, a pair loads at its pickup and unloads at its delivery.
  const capacity = vehicle.capacity ?? [];
  const isPair = (v: number) => partnerOf.has(v) && !(alone && inserted.has(v));
  const onBoard: number[] = [];
  const add = (demand: readonly number[] | undefined, sign: number) =>
    (demand ?? []).forEach((q, d) => {
      onBoard[d] = (onBoard[d] ?? 0) + sign * q;
    });
  for (const v of seq) if (!isPair(v) && !(alone && inserted.has(v))) add(problem.visits[v]!.demand, 1);
  const checkLoad = () =>
    onBoard.forEach((q, d) => {
      if (q > (capacity[d] ?? Infinity) + EPS) {
        broke("capacity");
        dims.add(d);
      }
    });
  checkLoad();

  let clock = vehicle.workingTime.start;
  const departure = clock;
  let at: Location = vehicle.start;
  let distance = 0;
  // For the shortest duration: waiting so far, and how much later the start could be (min over stops of waiting before + slack).
  let waited = 0;
  let delay = Infinity;
  const takeBreaks = (position: number) => {
    breaks(vehicle).forEach((b, index) => {
      if (breakAt[index] !== position || relaxed === "break") return;
      const start = Math.max(clock, b.earliestStart);
      if (start > b.latestEnd - b.duration + EPS) broke("break");
      waited += start - clock;
      delay = Math.min(delay, waited + Math.max(0, b.latestEnd - b.duration - start));
      clock = start + b.duration;
    });
  };
  takeBreaks(0);
  seq.forEach((v, index) => {
    const visit = problem.visits[v]!;
    const leg = legs.leg(at, visit.location, speed);
    distance += leg.distance;
    const arrival = clock + leg.minutes;
    let start = arrival;
    let close = Infinity;
    if (relaxed !== "timeWindow" && visit.timeWindows?.length) {
      const window = [...visit.timeWindows].sort((a, b) => a.start - b.start).find((w) => w.end >= arrival - EPS);
      if (window) {
        start = Math.max(arrival, window.start);
        close = window.end;
      } else broke("timeWindow");
    }
    waited += start - arrival;
    delay = Math.min(delay, waited + Math.max(0, close - start));
    clock = start + (visit.visitTime ?? 0);
    at = visit.location;
    if (isPair(v)) {
      if (pickups.has(v)) {
        add(visit.demand, 1);
        checkLoad();
      } else add(problem.visits[partnerOf.get(v)!]!.demand, -1);
    } else if (!(alone && inserted.has(v))) add(visit.demand, -1);
    takeBreaks(index + 1);
  });
  if (vehicle.returnToEnd !== false) {
    const leg = legs.leg(at, vehicle.end ?? vehicle.start, speed);
    distance += leg.distance;
    clock += leg.minutes;
  }
  if (clock > vehicle.workingTime.end + EPS) broke("workingTime");
  if (distance > (vehicle.maxDistance ?? Infinity) + EPS) broke("maxDistance");
  const duration = clock - departure - Math.min(waited, delay);
  if (duration > (vehicle.maxDuration ?? Infinity) + EPS) broke("maxDuration");
  return { families, dims };
}

const breaks = (vehicle: RoutingVehicle) => vehicle.breaks ?? [];

/** Legs between locations, asked of the provider once per pair and speed. */
class LegCache {
  private readonly cache = new Map<string, { distance: number; minutes: number }>();
  constructor(private readonly travel: TravelProvider) {}
  leg(from: Location, to: Location, speedKmh: number): { distance: number; minutes: number } {
    const key = `${from.lat},${from.lng};${to.lat},${to.lng};${speedKmh}`;
    let leg = this.cache.get(key);
    if (!leg) {
      const locations = [from, to];
      const distances = this.travel.distances(locations);
      const minutes = this.travel.travelMinutes(distances, speedKmh, locations);
      leg = { distance: distances[1]!, minutes: minutes[1]! };
      this.cache.set(key, leg);
    }
    return leg;
  }
}
