import type { RoutingResultBody } from "#shared/domain/routing-results/schema";
import type { EtaState, ObservedStop } from "#shared/domain/live/projection";
import type { Visit } from "#shared/domain/visits/schema";

/**
 * Runs that respect the road (docs/api/execution.md): what a run needs to know of a hub's day that
 * is already dispatched. Pure; the run worker reads the hub's live routes (one item per vehicle,
 * written at each dispatch) and their visits, and `buildRunProblem` folds them in:
 *
 * - a committed stop (EN_ROUTE or ARRIVED) becomes the vehicle's start: its place, the time its
 *   service ends at the earliest, and no load of it left (a delivered stop's goods are off the van);
 *   without one, the last finished stop (DONE/FAILED) is the start, from the time it finished;
 * - still-ASSIGNED visits stay on their vehicle (pinned): the optimizer may re-sequence them, not move
 *   them (a compatibility tag only that vehicle carries), and they take their room on it;
 * - a vehicle whose dispatched shift ended is not planned on a live day.
 */
export interface LiveRoute {
  vehicleId: string;
  hubId: string;
  /** The result whose dispatch wrote this route. */
  resultId: string;
  /** The vehicle's visits for the shift, in route order (finished ones of earlier dispatches first). */
  visitIds: string[];
  /** The route's departure, `Y-m-d H:i` in `timeZone`: which shift of the vehicle the route belongs to. */
  departure: string;
  timeZone: string;
  dispatchedTime: string;
  /** The plan's own times (live ETAs replay them); absent on routes dispatched before live ETAs. */
  plan?: LivePlan;
  /** What the day's progress actions observed and announced (written by each action, reset by each dispatch). */
  progress?: LiveProgress;
}

/** A dispatched route's times in the optimizer's arithmetic (shared/domain/live/projection.ts). */
export interface LivePlan {
  configurationId: string;
  /** `Y-m-d` (route zone) that `H:i` visit windows refer to. */
  planningDay: string;
  /** ISO 8601 UTC: the run's planning origin; every `…Minutes` counts from it. */
  origin: string;
  departureMinutes: number;
  returnMinutes: number;
  /** Index in `visitIds` of the route's first trip (the visits before it were served before this dispatch). */
  firstTrip: number;
  /** Travel minutes into each trip, in trip order. */
  legs: number[];
  /** Breaks: after which trip (1-based order, 0 = at the start), from when, how long. */
  breaks: Array<{ afterOrder: number; startMinutes: number; durationMinutes: number }>;
}

export interface LiveProgress {
  /** Bumped by every write of the progress state: the condition of the next one. */
  version: number;
  observed: Record<string, ObservedStop>;
  eta: Record<string, EtaState>;
}

export interface LiveVehicle {
  route: LiveRoute;
  /** The EN_ROUTE or ARRIVED visit of the route, if any (a vehicle holds at most one). */
  committed: Visit | undefined;
  /** The last DONE or FAILED visit of the route, if any. */
  lastFinished: Visit | undefined;
  /** Still ASSIGNED to this vehicle, in route order, and kept on it. */
  pinned: Visit[];
  /** Still ASSIGNED to this vehicle but released to the run's pool (`free`, `releaseVehicleIds`): planned like new work. */
  released: Visit[];
  /** Finished and committed visits of the route, in order: kept at the head of the next live route. */
  served: string[];
}

/**
 * What a run does with still-ASSIGNED visits (POST /routing/result/{id}/reoptimize): `keepVehicle` pins
 * them all to their vehicle; `free` pins only the loaded ones (`isLoaded`) and releases the rest to the
 * pool; a vehicle of `releaseVehicleIds` has all its ASSIGNED visits released (the vehicle stays in the plan).
 */
export interface AssignedPolicy {
  assigned: "keepVehicle" | "free";
  releaseVehicleIds?: readonly string[];
}

export const keepAssigned: AssignedPolicy = { assigned: "keepVehicle" };

const startedStatuses: ReadonlySet<Visit["status"]> = new Set(["EN_ROUTE", "ARRIVED", "DONE", "FAILED"]);

/**
 * Whether a still-ASSIGNED visit's goods are on its vehicle (docs/api/execution.md, "Loaded"): the vehicle
 * has left the hub — a visit of its route this shift was started, arrived, completed or failed — and the
 * visit is neither a pickup (its goods come on board there) nor the delivery of a pickup not yet DONE.
 */
export function isLoaded(visit: Visit, route: readonly Visit[]): boolean {
  if (!route.some((other) => startedStatuses.has(other.status))) return false;
  if (route.some((other) => other.pickupVisitId === visit._id)) return false;
  if (visit.pickupVisitId !== null) {
    const pickup = route.find((other) => other._id === visit.pickupVisitId);
    if (pickup?.status !== "DONE") return false;
  }
  return true;
}

/** The vehicles' live state from their live routes and the routes' visits as stored now (a visit taken by another vehicle since is not this one's). */
export function liveVehiclesOf(
  routes: readonly LiveRoute[],
  visits: readonly Visit[],
  policy: AssignedPolicy = keepAssigned,
): LiveVehicle[] {
  const byId = new Map(visits.map((visit) => [visit._id, visit]));
  const releasedVehicles = new Set(policy.releaseVehicleIds ?? []);
  return routes.map((route) => {
    const mine = route.visitIds.flatMap((id) => {
      const visit = byId.get(id);
      return visit && visit.assignedVehicleId === route.vehicleId ? [visit] : [];
    });
    const finished = mine.filter((visit) => visit.status === "DONE" || visit.status === "FAILED");
    const assigned = mine.filter((visit) => visit.status === "ASSIGNED");
    const kept = (visit: Visit) => !releasedVehicles.has(route.vehicleId) && (policy.assigned === "keepVehicle" || isLoaded(visit, mine));
    return {
      route,
      committed: mine.find((visit) => visit.status === "EN_ROUTE" || visit.status === "ARRIVED"),
      lastFinished: finished.at(-1),
      pinned: assigned.filter(kept),
      released: assigned.filter((visit) => !kept(visit)),
      served: mine.filter((visit) => startedStatuses.has(visit.status)).map((visit) => visit._id),
    };
  });
}

/** The tag only a pinned visit's vehicle carries: tags from clients cannot hold a control character, so none can match it. */
export const pinTag = (vehicleId: string) => `\u0001pinned:${vehicleId}`;

/** Visits pinned or released by the live day (both planned), counted against the run's cap. */
export const pinnedCount = (live: readonly LiveVehicle[]) =>
  live.reduce((sum, vehicle) => sum + vehicle.pinned.length + vehicle.released.length, 0);

/** The live route each dispatched route gives its vehicle: the visits it served before, then the route's trips. */
export function liveRoutesOf(
  routes: RoutingResultBody["routes"],
  target: { hubId: string; resultId: string; timeZone: string; dispatchedTime: string; configurationId?: string; planningDay?: string },
): LiveRoute[] {
  return routes.map((route) => {
    const plan = planOf(route, target);
    return {
      vehicleId: route.vehicleId,
      hubId: target.hubId,
      resultId: target.resultId,
      visitIds: [...(route.servedVisitIds ?? []), ...route.trips.map((trip) => trip.visitId)],
      departure: route.departure,
      timeZone: target.timeZone,
      dispatchedTime: target.dispatchedTime,
      ...(plan ? { plan } : {}),
    };
  });
}

/** The route's plan for live ETAs, when the result recorded its timing and leg minutes (results since live ETAs). */
function planOf(
  route: RoutingResultBody["routes"][number],
  target: { configurationId?: string; planningDay?: string },
): LivePlan | undefined {
  const timing = route.timing;
  const legs = route.trips.map((trip) => trip.travelMinutes);
  if (!timing || target.configurationId === undefined || target.planningDay === undefined || legs.some((leg) => leg === undefined))
    return undefined;
  return {
    configurationId: target.configurationId,
    planningDay: target.planningDay,
    origin: timing.origin,
    departureMinutes: timing.departureMinutes,
    returnMinutes: timing.returnMinutes,
    firstTrip: route.servedVisitIds?.length ?? 0,
    legs: legs as number[],
    breaks: route.breaks.flatMap((entry, index) => {
      const times = timing.breaks[index];
      return times ? [{ afterOrder: entry.afterOrder, ...times }] : [];
    }),
  };
}
