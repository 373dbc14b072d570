import { DateTime } from "luxon";
import type { LivePlan } from "#shared/domain/runs/live-day";
import { wallClockAt, wallClockOn } from "#shared/domain/runs/build-problem";
import { minutesOfDay } from "#shared/domain/schemas";
import { haversineMetres } from "#shared/routing/matrix";

/**
 * Live ETAs (docs/api/execution.md, "Live route and ETAs"): a dispatched route projected forward from
 * what the day has shown, on the optimizer's own arithmetic. Pure: the caller reads the live route,
 * its visits, the vehicle and the profile.
 *
 * Times are minutes since the plan's origin (the run's minute), as the run counted them, and printed
 * cut to their minute (`wallClockAt`), so a route with no progress replays its dispatched eta/etd to the
 * minute. The projection starts from the ARRIVED stop, else a fresh position (under 5 minutes old), else the
 * last finished stop (or the EN_ROUTE stop's start), else the plan's departure. Later legs are the run's
 * own leg minutes × the day's pace (actual ÷ planned travel of the observed legs, clamped 0.8–1.5); the
 * first leg from a position, or a leg whose planned predecessor was skipped, is great-circle × the road
 * factor at the vehicle's speed. Service starts at the opening of the first window still open on
 * arrival; a break keeps its place in the sequence and never starts earlier than planned.
 */
export const POSITION_FRESH_MINUTES = 5;
export const PACE_MIN = 0.8;
export const PACE_MAX = 1.5;
/** Legs shorter than this are too short to measure a pace on (a press of two buttons). */
const MIN_OBSERVED_LEG_MINUTES = 1;
/** A visit's `visit.eta.changed` is announced at most once per this many minutes. */
export const ETA_EVENT_INTERVAL_MINUTES = 5;

export const riskLevels = ["ON_TIME", "AT_RISK", "LATE"] as const;
export type Risk = (typeof riskLevels)[number];

/** Times a progress action observed at one stop (ISO 8601 UTC), kept on the live route. */
export interface ObservedStop {
  startedAt?: string;
  arrivedAt?: string;
  finishedAt?: string;
}

export interface Position {
  lat: number;
  lng: number;
  /** ISO 8601 UTC. */
  at: string;
}

/** One trip of the live route as it stands. */
export interface ProjectionStop {
  visitId: string;
  status: string;
  /** False when the visit is no longer this vehicle's (re-assigned, back in the pool, deleted): skipped. */
  onRoute: boolean;
  plannedEta: string | null;
  coordinate: { lat: number; lng: number };
  serviceMinutes: number;
  /** The visit's windows as stored (`H:i` on the planning day, or `Y-m-d H:i`). */
  timeWindows: ReadonlyArray<{ startTime: string; endTime: string }>;
  /** When its status last changed (ISO): the finish time of a DONE/FAILED stop without an observed one. */
  changedAt: string | null;
  observed?: ObservedStop;
}

export interface ProjectionInput {
  plan: Pick<LivePlan, "origin" | "departureMinutes" | "returnMinutes" | "breaks" | "planningDay"> & {
    /** Travel minutes into each stop of `stops` (undefined where the plan has none: visits served before it). */
    legs: ReadonlyArray<number | undefined>;
  };
  timeZone: string;
  /** The route's trips in order (aligned with `plan.legs`). */
  stops: readonly ProjectionStop[];
  now: Date;
  position?: Position | undefined;
  speedKmh: number;
  roadFactor: number;
  /** End of the vehicle's shift, ISO 8601 UTC. */
  shiftEnd: string;
  atRiskMinutes: number;
}

export interface ProjectedStop {
  visitId: string;
  status: string;
  plannedEta: string | null;
  /** Y-m-d H:i: projected arrival (an open stop), or the observed one (a finished stop, when known). */
  projectedEta: string | null;
  /** Y-m-d H:i: projected end of service, or when a finished stop finished. */
  projectedEtd: string | null;
  /** Minutes between the projected service start and the latest allowed one (window end; shift end without a window). Null when not open. */
  slackMinutes: number | null;
  risk: Risk | null;
}

export interface RouteProjection {
  stops: ProjectedStop[];
  currentVisitId: string | null;
  position: Position | null;
  projectedReturn: string | null;
  overtimeMinutes: number;
  /** The day's pace: actual ÷ planned travel on observed legs, clamped; 1 without any. */
  pace: number;
  /** Where the projection started: arrived | position | lastFinished | plan. */
  startedFrom: "arrived" | "position" | "lastFinished" | "plan";
}

const OPEN = new Set(["ASSIGNED", "EN_ROUTE", "ARRIVED"]);
const FINISHED = new Set(["DONE", "FAILED"]);
const EPSILON = 1e-6;

/** Windows of a visit in minutes since `origin` (`H:i` on the planning day in `zone`, dated ones as they are). */
export function windowMinutes(
  windows: ProjectionStop["timeWindows"],
  planningDay: string,
  zone: string,
  originMs: number,
): Array<{ start: number; end: number }> {
  const day = DateTime.fromFormat(planningDay, "yyyy-MM-dd", { zone });
  const read = (value: string) =>
    value.length > 5 ? DateTime.fromFormat(value, "yyyy-MM-dd HH:mm", { zone }) : wallClockOn(day, minutesOfDay(value));
  return windows
    .map((window) => ({
      start: (read(window.startTime).toMillis() - originMs) / 60_000,
      end: (read(window.endTime).toMillis() - originMs) / 60_000,
    }))
    .filter((window) => Number.isFinite(window.start) && Number.isFinite(window.end))
    .sort((a, b) => a.start - b.start);
}

/** The day's pace from the observed legs: Σ actual ÷ Σ planned, clamped to [0.8, 1.5]; 1 with none. */
export function observedPace(input: Pick<ProjectionInput, "plan" | "stops">, originMs: number): number {
  const minutes = (iso: string | undefined) => (iso === undefined ? undefined : (Date.parse(iso) - originMs) / 60_000);
  const breakAfter = new Set(input.plan.breaks.map((entry) => entry.afterOrder));
  let actual = 0;
  let planned = 0;
  input.stops.forEach((stop, index) => {
    const arrived = minutes(stop.observed?.arrivedAt);
    const leg = input.plan.legs[index];
    if (arrived === undefined || leg === undefined || leg < MIN_OBSERVED_LEG_MINUTES) return;
    const previous = index > 0 ? input.stops[index - 1] : undefined;
    // Left for this stop: its own start, else the previous stop's finish when no break came between.
    const left =
      minutes(stop.observed?.startedAt) ??
      (previous?.onRoute && !breakAfter.has(index) ? minutes(previous.observed?.finishedAt) : undefined);
    if (left === undefined || arrived < left) return;
    actual += arrived - left;
    planned += leg;
  });
  return planned > 0 ? Math.min(PACE_MAX, Math.max(PACE_MIN, actual / planned)) : 1;
}

/** The risk of a stop with `slack` minutes to spare: LATE below 0, AT_RISK below `atRiskMinutes`. */
export function riskOf(slack: number, atRiskMinutes: number): Risk {
  if (slack < 0) return "LATE";
  return slack < atRiskMinutes ? "AT_RISK" : "ON_TIME";
}

export function projectRoute(input: ProjectionInput): RouteProjection {
  const { plan, stops } = input;
  const originMs = Date.parse(plan.origin);
  const minutes = (iso: string | null | undefined) => (iso == null ? undefined : (Date.parse(iso) - originMs) / 60_000);
  const print = (value: number) => wallClockAt(new Date(originMs), value, input.timeZone);
  const now = (input.now.getTime() - originMs) / 60_000;
  const shiftEnd = (Date.parse(input.shiftEnd) - originMs) / 60_000;
  const pace = observedPace(input, originMs);
  const minutesPerMetre = 60 / (input.speedKmh * 1000);
  const driveMinutes = (from: { lat: number; lng: number }, to: { lat: number; lng: number }) =>
    input.roadFactor * haversineMetres(from, to) * minutesPerMetre;

  const projected: ProjectedStop[] = stops.map((stop) => ({
    visitId: stop.visitId,
    status: stop.status,
    plannedEta: stop.plannedEta,
    projectedEta: null,
    projectedEtd: null,
    slackMinutes: null,
    risk: null,
  }));
  const isOpen = (stop: ProjectionStop) => stop.onRoute && OPEN.has(stop.status);

  // Finished stops: what was observed.
  let lastFinished: { index: number; at: number } | undefined;
  stops.forEach((stop, index) => {
    if (!stop.onRoute || !FINISHED.has(stop.status)) return;
    const finished = minutes(stop.observed?.finishedAt) ?? minutes(stop.changedAt);
    const arrived = minutes(stop.observed?.arrivedAt);
    const row = projected[index] as ProjectedStop;
    if (arrived !== undefined) row.projectedEta = print(arrived);
    if (finished !== undefined) {
      row.projectedEtd = print(finished);
      if (!lastFinished || finished >= lastFinished.at) lastFinished = { index, at: finished };
    }
  });

  const windowsOf = new Map(
    stops.map((stop, index) => [index, windowMinutes(stop.timeWindows, plan.planningDay, input.timeZone, originMs)]),
  );
  /** Service at stop `index` on arriving at `arrival`: its start, end, and the latest start allowed. */
  const serve = (index: number, arrival: number) => {
    const stop = stops[index] as ProjectionStop;
    const windows = windowsOf.get(index) ?? [];
    if (windows.length === 0) return { start: arrival, end: arrival + stop.serviceMinutes, latest: shiftEnd - stop.serviceMinutes };
    const window = windows.find((candidate) => candidate.end >= arrival - EPSILON);
    const start = window ? Math.max(arrival, window.start) : arrival;
    return { start, end: start + stop.serviceMinutes, latest: (window ?? (windows.at(-1) as { end: number })).end };
  };
  const record = (index: number, arrival: number, service: ReturnType<typeof serve>) => {
    const row = projected[index] as ProjectedStop;
    row.projectedEta = print(arrival);
    row.projectedEtd = print(service.end);
    const slack = Math.floor(service.latest - service.start + EPSILON);
    row.slackMinutes = slack;
    row.risk = riskOf(slack, input.atRiskMinutes);
  };

  let clock: number;
  let at: { lat: number; lng: number } | undefined;
  /** Trip index whose planned successor leg starts where the vehicle is (-1: the route's start). */
  let from: number;
  /** Breaks after this trip order or later are still to take. */
  let breaksFrom: number;
  let startedFrom: RouteProjection["startedFrom"];
  let firstArrival: number | undefined;
  const open = stops.flatMap((stop, index) => (isOpen(stop) ? [index] : []));
  const arrivedIndex = open.find((index) => stops[index]?.status === "ARRIVED");
  const position =
    input.position && now - (minutes(input.position.at) as number) < POSITION_FRESH_MINUTES && Number.isFinite(minutes(input.position.at))
      ? input.position
      : undefined;

  const takeBreaks = (afterOrder: number) => {
    for (const entry of plan.breaks) {
      if (entry.afterOrder !== afterOrder || entry.afterOrder < breaksFrom) continue;
      clock = Math.max(clock, entry.startMinutes) + entry.durationMinutes;
    }
  };

  if (arrivedIndex !== undefined) {
    startedFrom = "arrived";
    const stop = stops[arrivedIndex] as ProjectionStop;
    const arrival = minutes(stop.observed?.arrivedAt) ?? minutes(stop.changedAt) ?? now;
    const service = serve(arrivedIndex, arrival);
    // A stop in service is not done before now.
    const end = Math.max(service.end, now);
    record(arrivedIndex, arrival, { ...service, end });
    clock = end;
    at = stop.coordinate;
    from = arrivedIndex;
    breaksFrom = arrivedIndex + 1;
    takeBreaks(arrivedIndex + 1);
  } else if (position) {
    startedFrom = "position";
    clock = minutes(position.at) as number;
    at = { lat: position.lat, lng: position.lng };
    from = Number.NaN; // no planned leg starts at a position
    breaksFrom = (open[0] ?? stops.length) + 1;
  } else if (lastFinished) {
    startedFrom = "lastFinished";
    const finished = lastFinished;
    clock = finished.at;
    at = stops[finished.index]?.coordinate;
    from = finished.index;
    breaksFrom = finished.index + 1;
    takeBreaks(finished.index + 1);
  } else {
    startedFrom = "plan";
    clock = plan.departureMinutes;
    at = undefined;
    from = -1;
    breaksFrom = 0;
    takeBreaks(0);
  }

  for (const index of open) {
    if (index === arrivedIndex) continue;
    const stop = stops[index] as ProjectionStop;
    const started = stop.status === "EN_ROUTE" ? minutes(stop.observed?.startedAt) : undefined;
    if (started !== undefined && startedFrom !== "position" && firstArrival === undefined) clock = Math.max(clock, started);
    const planned = plan.legs[index];
    // The planned leg holds when the vehicle is where that leg starts; otherwise drive there directly.
    const leg =
      from === index - 1 && planned !== undefined
        ? planned * pace
        : at !== undefined
          ? driveMinutes(at, stop.coordinate) * (startedFrom === "position" && firstArrival === undefined ? 1 : pace)
          : (planned ?? 0) * pace;
    let arrival = clock + leg;
    // Not there yet as far as anyone knows: the next stop is not reached before now.
    if (firstArrival === undefined) arrival = Math.max(arrival, now);
    firstArrival ??= arrival;
    const service = serve(index, arrival);
    record(index, arrival, service);
    clock = service.end;
    at = stop.coordinate;
    from = index;
    takeBreaks(index + 1);
  }

  let projectedReturn: number | null = null;
  if (open.length > 0) projectedReturn = clock + plan.returnMinutes * pace;
  else if (lastFinished) projectedReturn = lastFinished.at + plan.returnMinutes * pace;
  const current = open.find((index) => stops[index]?.status !== "ASSIGNED") ?? open[0];
  return {
    stops: projected,
    currentVisitId: current !== undefined ? (stops[current] as ProjectionStop).visitId : null,
    position: input.position ?? null,
    projectedReturn: projectedReturn === null ? null : print(projectedReturn),
    overtimeMinutes: projectedReturn === null ? 0 : Math.max(0, Math.ceil(projectedReturn - shiftEnd - EPSILON)),
    pace,
    startedFrom,
  };
}

/** The plan itself as a projection: every trip open and nothing observed (the baseline ETA events compare against). */
export function plannedProjection(input: ProjectionInput): RouteProjection {
  return projectRoute({
    ...input,
    stops: input.stops.map((stop) => ({ ...stop, status: "ASSIGNED", onRoute: true, observed: {} })),
    position: undefined,
    now: new Date(0),
  });
}

/** What a visit's ETA and risk were last announced as (kept per visit on the live route). */
export interface EtaState {
  eta: string;
  risk: Risk;
  /** Counts the ETA changes announced: `visit.eta.changed` ids derive from it. */
  etaN: number;
  riskN: number;
  /** ISO: when the ETA was last announced (the 5-minute rule). */
  etaAt: string | null;
  riskAt: string | null;
  previousEta: string | null;
  previousRisk: Risk | null;
  plannedEta: string | null;
  slackMinutes: number | null;
}

const minutesBetween = (a: string, b: string, zone: string) =>
  Math.abs(
    DateTime.fromFormat(a, "yyyy-MM-dd HH:mm", { zone }).diff(DateTime.fromFormat(b, "yyyy-MM-dd HH:mm", { zone }), "minutes").minutes,
  );

/**
 * The ETA and risk entries a new projection changes (the others stay): a visit's ETA is announced again
 * when it moved by at least `etaChangeMinutes` from the last one announced (at first: the plan's) and
 * none was announced in the last 5 minutes; its risk whenever it differs from the last announced.
 */
export function etaChanges(
  state: Readonly<Record<string, EtaState>>,
  projection: RouteProjection,
  baseline: RouteProjection,
  options: { now: Date; etaChangeMinutes: number; timeZone: string },
): Record<string, EtaState> {
  const planned = new Map(baseline.stops.map((stop) => [stop.visitId, stop]));
  const changes: Record<string, EtaState> = {};
  const nowIso = options.now.toISOString();
  for (const stop of projection.stops) {
    if (stop.projectedEta === null || stop.risk === null) continue;
    const plan = planned.get(stop.visitId);
    const previous: EtaState = state[stop.visitId] ?? {
      eta: plan?.projectedEta ?? stop.plannedEta ?? stop.projectedEta,
      risk: plan?.risk ?? "ON_TIME",
      etaN: 0,
      riskN: 0,
      etaAt: null,
      riskAt: null,
      previousEta: null,
      previousRisk: null,
      plannedEta: stop.plannedEta,
      slackMinutes: plan?.slackMinutes ?? null,
    };
    const quiet = previous.etaAt === null || options.now.getTime() - Date.parse(previous.etaAt) >= ETA_EVENT_INTERVAL_MINUTES * 60_000;
    const etaMoved = quiet && minutesBetween(stop.projectedEta, previous.eta, options.timeZone) >= options.etaChangeMinutes;
    const riskMoved = stop.risk !== previous.risk;
    if (!etaMoved && !riskMoved) continue;
    changes[stop.visitId] = {
      ...previous,
      slackMinutes: stop.slackMinutes,
      ...(etaMoved ? { eta: stop.projectedEta, previousEta: previous.eta, etaN: previous.etaN + 1, etaAt: nowIso } : {}),
      ...(riskMoved ? { risk: stop.risk, previousRisk: previous.risk, riskN: previous.riskN + 1, riskAt: nowIso } : {}),
    };
  }
  return changes;
}

/**
 * Geofence arrival (`autoArrival`): the vehicle has arrived at its next stop when its last two position
 * samples are both within `radiusMeters` of the stop and slow (under 5 km/h by the samples' own speed, or,
 * without one, by the distance between them).
 */
export const GEOFENCE_SLOW_KMH = 5;
/** Two samples further apart than this are a gap in the reports, not a stop: no pair. */
export const GEOFENCE_PAIR_MAX_MINUTES = POSITION_FRESH_MINUTES;

type TrackSample = { lat: number; lng: number; at: string; speedKmh?: number | null | undefined };

/** Both samples of a pair slow: each by its own speed, else by the distance between the two over their time apart. */
function slowPair(earlier: TrackSample, later: TrackSample): boolean {
  const hours = (Date.parse(later.at) - Date.parse(earlier.at)) / 3_600_000;
  const movedKmh = hours > 0 ? haversineMetres(earlier, later) / 1000 / hours : Number.POSITIVE_INFINITY;
  const slow = (sample: TrackSample) => (sample.speedKmh != null ? sample.speedKmh : movedKmh) < GEOFENCE_SLOW_KMH;
  return slow(earlier) && slow(later);
}

export function geofenceArrival(samples: ReadonlyArray<TrackSample>, stop: { lat: number; lng: number }, radiusMeters: number): boolean {
  const sorted = [...samples].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const last = sorted.slice(-2);
  if (last.length < 2) return false;
  const [earlier, later] = last as [TrackSample, TrackSample];
  return last.every((sample) => haversineMetres(sample, stop) <= radiusMeters) && slowPair(earlier, later);
}

/** Consecutive samples of a track (any order) at most GEOFENCE_PAIR_MAX_MINUTES apart, oldest pair first. */
function trackPairs<T extends TrackSample>(track: ReadonlyArray<T>): Array<[T, T]> {
  const sorted = [...track].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  return sorted.slice(1).flatMap((later, index) => {
    const earlier = sorted[index] as T;
    const apart = Date.parse(later.at) - Date.parse(earlier.at);
    return apart > 0 && apart <= GEOFENCE_PAIR_MAX_MINUTES * 60_000 ? [[earlier, later] as [T, T]] : [];
  });
}

/**
 * Whether a track could arrive anywhere: some pair of consecutive samples is slow. A moving vehicle's
 * report (the common case) reads nothing more; only a stopped one looks up its next stop.
 */
export const mayArriveByGeofence = (track: ReadonlyArray<TrackSample>): boolean =>
  trackPairs(track).some(([earlier, later]) => slowPair(earlier, later));

/**
 * The sample at which a track arrives at `stop` by `geofenceArrival`: the later sample of the first pair
 * of consecutive samples (oldest first, at most GEOFENCE_PAIR_MAX_MINUTES apart) both within the radius
 * and slow. A report of many samples (a driver app's queue) arrives where the vehicle first stopped.
 */
export function geofenceArrivalSample<T extends TrackSample>(
  track: ReadonlyArray<T>,
  stop: { lat: number; lng: number },
  radiusMeters: number,
): T | undefined {
  return trackPairs(track).find((pair) => geofenceArrival(pair, stop, radiusMeters))?.[1];
}
