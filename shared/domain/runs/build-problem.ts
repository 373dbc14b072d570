import { DateTime } from "luxon";
import type { RoutingConfiguration } from "#shared/domain/configurations/schema";
import type { Hub } from "#shared/domain/hubs/schema";
import { minutesOfDay } from "#shared/domain/schemas";
import type { Vehicle } from "#shared/domain/vehicles/schema";
import type { Visit } from "#shared/domain/visits/schema";
import { type LiveVehicle, pinTag } from "#shared/domain/runs/live-day";
import type {
  DropReason,
  RoutingEnd,
  RoutingProblem,
  RoutingSolution,
  RoutingVehicle,
  RoutingVisit,
  TimeWindow,
  VehicleBreak,
} from "#shared/routing/model";
import { greatCircleTravel } from "#shared/routing/matrix";
import { type DropExplanation, type DropReasonCode, explainDropped } from "#shared/routing/explain";

/**
 * Pure mapping between stored records and the optimizer's model (no I/O).
 *
 * Times in the problem are minutes since the planning origin: the run instant cut to its minute
 * (`planningOrigin`), so every wall-clock bound (a window, a break window, a shift start or end) is a whole
 * number of minutes in the problem, and the run instant itself is the fraction `runOffsetMinutes` of the first
 * one; nothing is planned before it. Answered times are the problem's minutes printed cut to their minute
 * (`wallClockAt`): a time ≥ a whole-minute bound prints ≥ it, one ≤ it prints ≤ it, so no answered time
 * breaks a bound, whatever the second of the run instant. Wall-clock values (working hours, breaks, `H:i`
 * visit windows) are read in the hub's time zone (or the application time zone when the hub names none),
 * as wall clocks on their calendar day (a 13:00 window is 13:00 on a day that changes to or from DST too):
 *
 * - each vehicle works the first shift (the one starting on the day before, the day of, or the day
 *   after the run) that has not ended at the run instant, from the later of its start and the run
 *   instant — so a run after the working day plans the next working day;
 * - the planning day is the date of the later of the run instant and the earliest of those shift
 *   starts; `H:i` visit windows refer to that day, `Y-m-d H:i` windows are absolute;
 * - window parts before the run instant are cut off; a visit whose every window has passed is
 *   dropped before solving (`outside every working time`).
 */
export const capacityDimensions = ["weight", "volume"] as const;
export type CapacityDimension = (typeof capacityDimensions)[number];

export interface RunPlanInput {
  runAt: Date;
  hub: Hub;
  configuration: RoutingConfiguration;
  vehicles: Vehicle[];
  visits: Visit[];
  /** Zone of a hub without its own (APP_TIMEZONE). */
  appTimeZone: string;
  /** The hub's dispatched routes and their visits now (shared/domain/runs/live-day.ts); none = a fresh day. */
  live?: LiveVehicle[];
  /**
   * On a live day, whether profile vehicles with no dispatched route in the shift may take work (default true);
   * false plans only the vehicles already on the road.
   */
  useIdleVehicles?: boolean;
}

export interface PlannedProblem {
  problem: RoutingProblem;
  timeZone: string;
  /** `Y-m-d` (hub zone) that `H:i` windows referred to. */
  planningDay: string;
  /** Capacity dimensions the problem enforces, in demand/capacity order. */
  dimensions: CapacityDimension[];
  /** Visits dropped before solving (every window passed, or the partner's). */
  preDropped: Array<{ visitId: string; reason: DropReason; reasonCode: DropReasonCode }>;
  /** Live day: visits kept on their vehicle (visit id → the result that dispatched them). */
  pinnedFrom: Map<string, string>;
  /** Live day: per vehicle, the visits already finished or under way (not planned again). */
  served: Map<string, string[]>;
  /** The pinned visits themselves (planned with the run's visits). */
  pinnedVisits: Visit[];
  /** Live day: still-ASSIGNED visits released to the pool (among the run's visits) → the result that dispatched them. */
  releasedFrom: Map<string, string>;
}

interface Shift {
  start: DateTime;
  end: DateTime;
  breakWindow: { start: DateTime; end: DateTime } | null;
}

/**
 * The wall clock `minute` minutes after the start of `day` counted in calendar days and clock minutes (1500 is
 * 01:00 of the next day), in the day's zone: on a day that changes to or from DST, 13:00 is still 13:00 (a
 * clock time that does not exist, in the hour skipped, is read as the time the clock jumped to).
 */
export function wallClockOn(day: DateTime, minute: number): DateTime {
  const days = Math.floor(minute / 1440);
  const inDay = minute - days * 1440;
  return day.plus({ days }).set({ hour: Math.floor(inDay / 60), minute: inDay % 60, second: 0, millisecond: 0 });
}

function shiftOn(day: DateTime, vehicle: Vehicle): Shift {
  const startMinute = minutesOfDay(vehicle.workingTime.startTime);
  let length = minutesOfDay(vehicle.workingTime.endTime) + vehicle.workingTime.multiday * 1440 - startMinute;
  if (length <= 0) length += 1440; // multiday shifts whose end clock is before their start clock (validated on write)
  const start = wallClockOn(day, startMinute);
  let breakWindow: Shift["breakWindow"] = null;
  if (vehicle.breakTime) {
    // As validated on write: a break clock time earlier than the shift start belongs to the next day.
    const rawStart = minutesOfDay(vehicle.breakTime.startTime);
    const breakStart = rawStart >= startMinute ? rawStart : rawStart + 1440;
    const breakLength = (minutesOfDay(vehicle.breakTime.endTime) - rawStart + 1440) % 1440;
    breakWindow = { start: wallClockOn(day, breakStart), end: wallClockOn(day, breakStart + breakLength) };
  }
  return { start, end: wallClockOn(day, startMinute + length), breakWindow };
}

/**
 * The shift a run plans on: of the shifts running at the run instant, the one that started last; else the next to
 * start. Shifts longer than a day overlap (00:00–23:59 with `multiday: 1` runs 48 hours from every midnight): the
 * first one still running would be yesterday's, with minutes left at 23:30, where today's has a day more.
 */
export function currentOrNextShift(vehicle: Vehicle, runAt: DateTime): Shift {
  const today = runAt.startOf("day");
  const shifts = [-1, 0, 1].map((offset) => shiftOn(today.plus({ days: offset }), vehicle));
  const running = shifts.filter((shift) => shift.start <= runAt && shift.end > runAt);
  // A shift of day+1 always ends after the run, so one of them is found.
  return running.at(-1) ?? shifts.find((shift) => shift.end > runAt) ?? shiftOn(today.plus({ days: 2 }), vehicle);
}

const minutesBetween = (origin: DateTime, instant: DateTime) => instant.diff(origin, "minutes").minutes;

function windowsOf(visit: Visit, planningDay: DateTime, origin: DateTime, now: number): TimeWindow[] | "all passed" {
  if (visit.timeWindows.length === 0) return [];
  const windows: TimeWindow[] = [];
  for (const window of visit.timeWindows) {
    const read = (value: string) =>
      value.length > 5
        ? DateTime.fromFormat(value, "yyyy-MM-dd HH:mm", { zone: planningDay.zone })
        : wallClockOn(planningDay, minutesOfDay(value));
    const start = minutesBetween(origin, read(window.startTime));
    const end = minutesBetween(origin, read(window.endTime));
    if (end < now) continue;
    windows.push({ start: Math.max(now, start), end });
  }
  return windows.length ? windows : "all passed";
}

export function buildRunProblem(input: RunPlanInput): PlannedProblem {
  const { configuration, hub } = input;
  const timeZone = hub.timeZone ?? input.appTimeZone;
  const runAt = DateTime.fromJSDate(input.runAt, { zone: timeZone });
  const origin = DateTime.fromJSDate(planningOrigin(input.runAt), { zone: timeZone });
  // The run instant, in the problem's minutes: nothing starts before it.
  const now = runOffsetMinutes(input.runAt);
  const depot = { lat: hub.lat, lng: hub.lng };
  const dimensions = capacityDimensions.filter((dimension) => configuration.capacityConstraint[dimension]);

  const liveDay = liveDayOf(input, runAt);
  const idleAllowed = input.useIdleVehicles !== false || liveDay.current.size === 0;
  const planVehicles = input.vehicles.filter(
    (vehicle) => !liveDay.out.has(vehicle._id) && (idleAllowed || liveDay.current.has(vehicle._id)),
  );
  const shifts = planVehicles.map((vehicle) => currentOrNextShift(vehicle, runAt));
  const earliestStart = shifts.reduce<DateTime | undefined>(
    (earliest, shift) => (!earliest || shift.start < earliest ? shift.start : earliest),
    undefined,
  );
  const planningDay = (earliestStart && earliestStart > runAt ? earliestStart : runAt).startOf("day");

  const vehicles: RoutingVehicle[] = planVehicles.map((vehicle, index) => {
    const shift = shifts[index] as Shift;
    const live = liveDay.current.get(vehicle._id);
    const resume = live ? resumePoint(live, runAt, timeZone, configuration.defaultVisitTime) : undefined;
    const breaks: VehicleBreak[] = [];
    if (shift.breakWindow && shift.breakWindow.end > runAt) {
      const earliest = Math.max(now, minutesBetween(origin, shift.breakWindow.start));
      const latest = minutesBetween(origin, shift.breakWindow.end);
      if (latest > earliest) breaks.push({ earliestStart: earliest, latestEnd: latest, duration: latest - earliest });
    }
    return {
      id: vehicle._id,
      // A driver who starts from home, or ends elsewhere: a set end location is always driven to.
      start: resume?.location ?? vehicle.startLocation ?? depot,
      end: vehicle.endLocation ?? depot,
      returnToEnd: vehicle.endLocation ? true : configuration.returnToHub,
      capacity: dimensions.map((dimension) => vehicle.capacity[dimension]?.max ?? Infinity),
      minCapacity: dimensions.map((dimension) => vehicle.capacity[dimension]?.min ?? 0),
      speedKmh: vehicle.speed ?? configuration.defaultSpeed,
      workingTime: {
        start: Math.max(now, minutesBetween(origin, shift.start), resume ? minutesBetween(origin, resume.from) : now),
        end: minutesBetween(origin, shift.end),
      },
      breaks,
      tags: live ? [...vehicle.tags, pinTag(vehicle._id)] : vehicle.tags,
      // The vehicle's 0–100 priority shifted by one: the hierarchical objective then still counts a
      // "free" vehicle as a vehicle used, so fewer vehicles are preferred even when every cost is 0.
      fixedCost: vehicle.fixedCost + 1,
      ...(vehicle.constraints.maxVisits !== undefined ? { maxVisits: vehicle.constraints.maxVisits } : {}),
      ...(vehicle.constraints.maxDistanceKm !== undefined ? { maxDistance: vehicle.constraints.maxDistanceKm * 1000 } : {}),
      ...(vehicle.constraints.maxDurationMinutes !== undefined ? { maxDuration: vehicle.constraints.maxDurationMinutes } : {}),
    };
  });

  const visits: RoutingVisit[] = [];
  const preDropped: PlannedProblem["preDropped"] = [];
  const pinnedFrom = new Map<string, string>();
  const pinnedVisits: Visit[] = [];
  for (const live of liveDay.current.values()) {
    for (const visit of live.pinned) {
      pinnedFrom.set(visit._id, live.route.resultId);
      pinnedVisits.push(visit);
    }
  }
  const releasedFrom = new Map<string, string>();
  for (const live of input.live ?? []) for (const visit of live.released) releasedFrom.set(visit._id, live.route.resultId);
  const planVisits = [...pinnedVisits, ...input.visits.filter((visit) => !pinnedFrom.has(visit._id))];
  const windows = new Map(planVisits.map((visit) => [visit._id, windowsOf(visit, planningDay, origin, now)]));
  // A pair is planned as a pair only when both of its visits are in the run (active and among the
  // oldest collected); a visit whose partner is not is planned as an ordinary visit. A pair one of whose
  // visits has no window left is dropped as a whole.
  // (The API keeps a visit in at most one pair; should stored data say otherwise, the first pair wins.)
  const pickupOf = new Map<string, string>();
  const partnerOf = new Map<string, string>();
  for (const visit of planVisits) {
    const pickup = visit.pickupVisitId;
    if (pickup === null || pickup === visit._id || !windows.has(pickup) || partnerOf.has(pickup) || partnerOf.has(visit._id)) continue;
    pickupOf.set(visit._id, pickup);
    partnerOf.set(visit._id, pickup).set(pickup, visit._id);
  }
  for (const visit of planVisits) {
    const visitWindows = windows.get(visit._id)!;
    if (visitWindows === "all passed") {
      preDropped.push({ visitId: visit._id, reason: "outside every working time", reasonCode: "timeWindow" });
      continue;
    }
    const partner = partnerOf.get(visit._id);
    if (partner !== undefined && windows.get(partner) === "all passed") {
      preDropped.push({ visitId: visit._id, reason: "pickup and delivery cannot both be served", reasonCode: "pickupDelivery" });
      continue;
    }
    const pickupVisitId = pickupOf.get(visit._id);
    visits.push({
      id: visit._id,
      location: visit.coordinate,
      visitTime: visit.visitTime ?? configuration.defaultVisitTime,
      timeWindows: visitWindows,
      demand: dimensions.map((dimension) => visit.capacity[dimension] ?? 0),
      // A pinned visit stays on its vehicle (only that vehicle carries the tag) and is kept before new work: it was promised.
      requiredTags: pinnedFrom.has(visit._id) ? [...visit.tags, pinTag(visit.assignedVehicleId as string)] : visit.tags,
      priority: pinnedFrom.has(visit._id) ? 5 : visit.priority,
      ...(pickupVisitId !== undefined ? { pickupVisitId } : {}),
    });
  }

  // Warm start: each live vehicle carries on with its pinned visits in their dispatched order.
  const initialRoutes = [...liveDay.current.values()]
    .filter((live) => live.pinned.length > 0)
    .map((live) => ({ vehicleId: live.route.vehicleId, visitIds: live.pinned.map((visit) => visit._id) }));
  return {
    problem: {
      visits,
      vehicles,
      travel: greatCircleTravel(configuration.roadFactor),
      ...(initialRoutes.length > 0 ? { initialRoutes } : {}),
    },
    timeZone,
    planningDay: planningDay.toFormat("yyyy-MM-dd"),
    dimensions,
    preDropped,
    pinnedFrom,
    served: new Map([...liveDay.current.values()].map((live) => [live.route.vehicleId, live.served])),
    pinnedVisits,
    releasedFrom,
  };
}

const readWallClock = (value: string, zone: string) => DateTime.fromFormat(value, "yyyy-MM-dd HH:mm", { zone });

/**
 * The hub's live vehicles this run plans around: `current` those whose dispatched route is in the
 * shift the run plans for them; `out` those whose dispatched shift has ended while another vehicle's
 * day is still live (nothing more for them today). A route of a shift that ended on a day with no
 * live vehicle left is history: the run plans the next shift as a fresh one.
 */
function liveDayOf(input: RunPlanInput, runAt: DateTime): { current: Map<string, LiveVehicle>; out: Set<string> } {
  const current = new Map<string, LiveVehicle>();
  const ended: string[] = [];
  const vehicles = new Map(input.vehicles.map((vehicle) => [vehicle._id, vehicle]));
  for (const live of input.live ?? []) {
    const vehicle = vehicles.get(live.route.vehicleId);
    if (!vehicle) continue;
    const departure = readWallClock(live.route.departure, live.route.timeZone);
    if (!departure.isValid) continue;
    const shift = currentOrNextShift(vehicle, runAt);
    if (departure >= shift.start.minus({ minutes: 1 }) && departure < shift.end) current.set(vehicle._id, live);
    else if (departure < shift.start && shift.start > runAt) ended.push(vehicle._id);
  }
  return { current, out: current.size > 0 ? new Set(ended) : new Set() };
}

/**
 * Where and from when a live vehicle can take more work: after its committed stop (arrival at its eta
 * or now, whichever is later, plus its service), else from its last finished stop at the time it
 * finished (or now); undefined when nothing of its route has started.
 */
function resumePoint(
  live: LiveVehicle,
  runAt: DateTime,
  timeZone: string,
  defaultVisitTime: number,
): { location: { lat: number; lng: number }; from: DateTime } | undefined {
  const latest = (...instants: DateTime[]) => DateTime.max(...instants) as DateTime;
  const stop = live.committed;
  if (stop) {
    const service = stop.visitTime ?? defaultVisitTime;
    const arrivedAt =
      stop.status === "ARRIVED" && stop.lastTransition ? DateTime.fromISO(stop.lastTransition.at, { zone: timeZone }) : undefined;
    const eta = stop.eta ? readWallClock(stop.eta, timeZone) : undefined;
    const arrival = arrivedAt?.isValid ? arrivedAt : latest(runAt, eta?.isValid ? eta : runAt);
    return { location: stop.coordinate, from: latest(runAt, arrival.plus({ minutes: service })) };
  }
  const last = live.lastFinished;
  if (!last) return undefined;
  const finishedAt = last.lastTransition ? DateTime.fromISO(last.lastTransition.at, { zone: timeZone }) : runAt;
  return { location: last.coordinate, from: latest(runAt, finishedAt.isValid ? finishedAt : runAt) };
}

/**
 * The time semantics of plans (shared with live ETAs): a run's problem counts minutes from its planning
 * origin, the run instant cut to its (UTC, so in every zone of whole-minute offsets, wall-clock) minute.
 */
export function planningOrigin(runAt: Date): Date {
  return new Date(Math.floor(runAt.getTime() / 60_000) * 60_000);
}

/** The run instant in the problem's minutes (0 ≤ it < 1: its seconds). */
export function runOffsetMinutes(runAt: Date): number {
  return (runAt.getTime() - planningOrigin(runAt).getTime()) / 60_000;
}

/** Float sums of travel minutes land a hair beside whole minutes: below this, a time counts as the minute it is close to. */
const MINUTE_SLACK = 1e-6;

/** The instant `minutes` (problem minutes) stand for, cut to its minute: what is printed. */
export function wallClockInstant(runAt: Date, minutes: number): Date {
  return new Date(planningOrigin(runAt).getTime() + Math.floor(minutes + MINUTE_SLACK) * 60_000);
}

/**
 * `Y-m-d H:i` of `minutes` after the planning origin of a run at `runAt`, in `timeZone`, cut (never rounded)
 * to its minute: a time at or after a whole-minute bound prints at or after it, one at or before prints at or
 * before it. So no printed time breaks a window, a break window or a shift of the problem.
 */
export function wallClockAt(runAt: Date, minutes: number, timeZone: string): string {
  return DateTime.fromJSDate(wallClockInstant(runAt, minutes), { zone: timeZone }).toFormat("yyyy-MM-dd HH:mm");
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

export interface ResultTrip {
  pinnedFromResultId?: string;
  releasedFromResultId?: string;
  order: number;
  visitId: string;
  visitName: string;
  coordinate: { lat: number; lng: number };
  eta: string;
  etd: string;
  serviceStart: string;
  waitingMinutes: number;
  distanceMeters: number;
  load: Record<string, number>;
  /** The visit's windows as stored (`H:i–H:i` on the planning day, or dated), for the printed map; null without. */
  window: string | null;
  /** The run's own travel minutes into this stop (from the previous stop, or the start): live ETAs reuse them. */
  travelMinutes: number;
}

/**
 * A route's times in the optimizer's own arithmetic (minutes since `origin`, the run's minute; unrounded),
 * kept so a live projection (shared/domain/live/projection.ts) replays the plan to the minute.
 */
export interface RouteTiming {
  /** ISO 8601 UTC: the planning origin (the run instant cut to its minute). */
  origin: string;
  departureMinutes: number;
  /** Travel from the last stop back to the end (0 when the route does not return). */
  returnMinutes: number;
  /** The route's breaks in the order of `breaks`: start minutes and length. */
  breaks: Array<{ startMinutes: number; durationMinutes: number }>;
}

export interface ResultRoute {
  vehicleId: string;
  vehicleName: string;
  departure: string;
  arrival: string;
  distanceMeters: number;
  durationMinutes: number;
  travelMinutes: number;
  waitingMinutes: number;
  serviceMinutes: number;
  load: Record<string, number>;
  breaks: Array<{ start: string; end: string; afterOrder: number }>;
  trips: ResultTrip[];
  servedVisitIds?: string[];
  timing?: RouteTiming;
}

export interface ResultDropped {
  visitId: string;
  visitName: string;
  reason: string;
  reasonCode: DropReasonCode;
  /** For `capacity`: the binding dimension(s), comma-separated; else null. */
  reasonDetail: string | null;
  releasedFromResultId?: string;
}

export interface ResultBody {
  routes: ResultRoute[];
  dropped: ResultDropped[];
}

export interface ResultSummary {
  vehiclesUsed: number;
  vehiclesAvailable: number;
  visitsPlanned: number;
  visitsAssigned: number;
  visitsDropped: number;
  distanceMeters: number;
  durationMinutes: number;
  planningDay: string;
  timeZone: string;
  /** How the optimizer's search ended (early stop, budget, deadline guard, failed search thread). */
  endedBy: RoutingEnd;
  /** Dropped visits per reason code (codes with none left out). */
  droppedByReason: Partial<Record<DropReasonCode, number>>;
  /** True when the explanation of dropped visits reached its time cap (the rest are `unexplained`). */
  explanationCut: boolean;
}

/** The sentence of a visit the search left out (visits dropped before it keep the solver's sentences, word for word). */
const searchDropSentence: Record<DropReasonCode, string> = {
  capacity: "could not be fitted: no route has the capacity left",
  timeWindow: "could not be fitted: no route reaches it inside its time windows",
  workingTime: "could not be fitted: no route can serve it within its working time",
  break: "could not be fitted: it leaves no room for a break inside its window",
  maxVisits: "could not be fitted: the routes that could take it have their maximum visits",
  maxDistance: "could not be fitted: it would take a route beyond its maximum distance",
  maxDuration: "could not be fitted: it would take a route beyond its maximum duration",
  noCompatibleVehicle: "could not be fitted: the vehicles with its tags have no room for it",
  pickupDelivery: "could not be fitted: its pickup and delivery cannot both be served on one route",
  badCoordinates: "bad coordinates",
  lowPriority: "could not be fitted: serving it costs more than the plan gains",
  unexplained: "could not be fitted: not explained, the explanation reached its time cap",
};

/** Codes, details and sentences of every dropped visit: pre-solve reasons by their sentence, search drops by insertion evaluation. */
export function explainDrops(
  planned: PlannedProblem,
  solution: RoutingSolution,
  options: Parameters<typeof explainDropped>[2] = {},
): Array<{ visitId: string; reason: string; reasonCode: DropReasonCode; reasonDetail: string | null }> {
  const explained = explainDropped(planned.problem, solution, options);
  const detail = (explanation: DropExplanation | undefined) =>
    explanation?.reasonCode === "capacity" && explanation.capacityDimensions.length > 0
      ? explanation.capacityDimensions.map((d) => planned.dimensions[d] ?? `dimension ${d}`).join(",")
      : null;
  return [
    ...planned.preDropped.map((entry) => ({ ...entry, reasonDetail: null })),
    ...solution.dropped.map((entry) => {
      const explanation = explained.get(entry.visitId);
      const reasonCode = explanation?.reasonCode ?? "lowPriority";
      const reasonDetail = detail(explanation);
      const reason =
        entry.reason === "could not be fitted"
          ? reasonCode === "capacity" && reasonDetail
            ? `could not be fitted: no route has the ${reasonDetail} capacity left`
            : searchDropSentence[reasonCode]
          : entry.reason;
      return { visitId: entry.visitId, reason, reasonCode, reasonDetail };
    }),
  ];
}

/**
 * Travel minutes of each leg of a solved route, as the solver's schedule has them: the leg into a stop
 * is its arrival less the clock it left at (the previous departure, or the end of the breaks taken after
 * it); `back` is the leg to the end. Memoised per route (the trips of one route ask in turn).
 */
const legsOfRoute = new WeakMap<RoutingSolution["routes"][number], { into: number[]; back: number }>();
function legMinutesOf(route: RoutingSolution["routes"][number]): { into: number[]; back: number } {
  const known = legsOfRoute.get(route);
  if (known) return known;
  const into: number[] = [];
  let clock = route.departure;
  const afterBreaks = (stopIndex: number) => {
    for (const entry of route.breaks) if (entry.afterStop === stopIndex) clock = entry.end;
  };
  afterBreaks(-1);
  route.stops.forEach((stop, index) => {
    into.push(stop.arrival - clock);
    clock = stop.departure;
    afterBreaks(index);
  });
  const legs = { into, back: route.arrival - clock };
  legsOfRoute.set(route, legs);
  return legs;
}

/** The stored result body (per vehicle: totals and ordered trips with eta/etd) and its summary. */
export function describeSolution(
  input: RunPlanInput,
  planned: PlannedProblem,
  solution: RoutingSolution,
  drops: ReturnType<typeof explainDrops> = explainDrops(planned, solution),
): { body: ResultBody; summary: ResultSummary } {
  const at = (minutes: number) => wallClockAt(input.runAt, minutes, planned.timeZone);
  const visitsById = new Map([...input.visits, ...planned.pinnedVisits].map((visit) => [visit._id, visit]));
  const vehiclesById = new Map(input.vehicles.map((vehicle) => [vehicle._id, vehicle]));
  const loadOf = (load: number[]) => Object.fromEntries(planned.dimensions.map((dimension, d) => [dimension, round(load[d] ?? 0, 3)]));

  const origin = planningOrigin(input.runAt).toISOString();
  const routes: ResultRoute[] = solution.routes.map((route) => ({
    vehicleId: route.vehicleId,
    vehicleName: vehiclesById.get(route.vehicleId)?.name ?? route.vehicleId,
    departure: at(route.departure),
    arrival: at(route.arrival),
    distanceMeters: Math.round(route.distance),
    durationMinutes: round(route.duration),
    travelMinutes: round(route.travelTime),
    waitingMinutes: round(route.waitingTime),
    serviceMinutes: round(route.serviceTime),
    load: loadOf(route.load),
    breaks: route.breaks.map((entry) => ({ start: at(entry.start), end: at(entry.end), afterOrder: entry.afterStop + 1 })),
    trips: route.stops.map((stop, index) => {
      const visit = visitsById.get(stop.visitId);
      const legs = legMinutesOf(route);
      return {
        order: index + 1,
        visitId: stop.visitId,
        visitName: visit?.name ?? stop.visitId,
        coordinate: visit?.coordinate ?? { lat: 0, lng: 0 },
        eta: at(stop.arrival),
        etd: at(stop.departure),
        serviceStart: at(stop.start),
        waitingMinutes: round(stop.waiting),
        distanceMeters: Math.round(stop.distance),
        load: loadOf(stop.load),
        window: visit?.timeWindows.length ? visit.timeWindows.map((w) => `${w.startTime}–${w.endTime}`).join(", ") : null,
        travelMinutes: legs.into[index] as number,
        ...(planned.pinnedFrom.has(stop.visitId) ? { pinnedFromResultId: planned.pinnedFrom.get(stop.visitId) as string } : {}),
        ...(planned.releasedFrom.has(stop.visitId) ? { releasedFromResultId: planned.releasedFrom.get(stop.visitId) as string } : {}),
      };
    }),
    ...(planned.served.has(route.vehicleId) ? { servedVisitIds: planned.served.get(route.vehicleId) as string[] } : {}),
    timing: {
      origin,
      departureMinutes: route.departure,
      returnMinutes: legMinutesOf(route).back,
      breaks: route.breaks.map((entry) => ({ startMinutes: entry.start, durationMinutes: entry.end - entry.start })),
    },
  }));
  const dropped: ResultDropped[] = drops.map((entry) => ({
    visitId: entry.visitId,
    visitName: visitsById.get(entry.visitId)?.name ?? entry.visitId,
    reason: entry.reason,
    reasonCode: entry.reasonCode,
    reasonDetail: entry.reasonDetail,
    ...(planned.releasedFrom.has(entry.visitId) ? { releasedFromResultId: planned.releasedFrom.get(entry.visitId) as string } : {}),
  }));
  const droppedByReason: ResultSummary["droppedByReason"] = {};
  for (const entry of dropped) droppedByReason[entry.reasonCode] = (droppedByReason[entry.reasonCode] ?? 0) + 1;
  const visitsAssigned = routes.reduce((sum, route) => sum + route.trips.length, 0);
  return {
    body: { routes, dropped },
    summary: {
      vehiclesUsed: routes.length,
      vehiclesAvailable: input.vehicles.length,
      visitsPlanned: input.visits.length + planned.pinnedVisits.length,
      visitsAssigned,
      visitsDropped: dropped.length,
      distanceMeters: routes.reduce((sum, route) => sum + route.distanceMeters, 0),
      durationMinutes: round(routes.reduce((sum, route) => sum + route.durationMinutes, 0)),
      planningDay: planned.planningDay,
      timeZone: planned.timeZone,
      endedBy: solution.endedBy,
      droppedByReason,
      explanationCut: dropped.some((entry) => entry.reasonCode === "unexplained"),
    },
  };
}
