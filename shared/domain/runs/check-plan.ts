import { DateTime } from "luxon";
import { minutesOfDay } from "#shared/domain/schemas";
import { checkSolution } from "#shared/routing/check";
import type { RoutingSolution } from "#shared/routing/model";
import {
  currentOrNextShift,
  type PlannedProblem,
  planningOrigin,
  type ResultBody,
  type RunPlanInput,
  wallClockOn,
} from "#shared/domain/runs/build-problem";

/**
 * The checks every plan passes before it is stored (the run worker calls `planViolations`):
 *
 * - the model's constraints, on the solver's minutes (`checkSolution`, shared/routing/check.ts);
 * - the answered wall-clock values, read back from the result body as a dispatcher reads them against the
 *   stored records: every service start inside one of its visit's windows (at minute resolution) and not before
 *   the run's minute, eta ≤ serviceStart ≤ etd; every route inside its vehicle's shift; every break inside its
 *   allowed window and as long as it; loads within capacity at every point (pairs on board from pickup to
 *   delivery); tags; pairs on one route, pickup first; every visit of the run once, in a route or dropped.
 *
 * A violation names the vehicle (`vehicleId: …`) when it is one route's, so a caller can set that route aside.
 */
export function planViolations(input: RunPlanInput, planned: PlannedProblem, solution: RoutingSolution, body: ResultBody): string[] {
  return [...checkSolution(planned.problem, solution).violations, ...answeredViolations(input, planned, body)];
}

const FORMAT = "yyyy-MM-dd HH:mm";

export function answeredViolations(input: RunPlanInput, planned: PlannedProblem, body: ResultBody): string[] {
  const zone = planned.timeZone;
  const violations: string[] = [];
  const read = (text: string) => DateTime.fromFormat(text, FORMAT, { zone });
  const runMinute = DateTime.fromJSDate(planningOrigin(input.runAt), { zone });
  const runAt = DateTime.fromJSDate(input.runAt, { zone });
  const planningDay = DateTime.fromFormat(planned.planningDay, "yyyy-MM-dd", { zone });
  // The run's visits: a live day's pinned visits (still ASSIGNED, so not among the active ones read) and the others.
  const runVisits = [...planned.pinnedVisits, ...input.visits.filter((visit) => !planned.pinnedFrom.has(visit._id))];
  const visits = new Map(runVisits.map((visit) => [visit._id, visit]));
  const vehicles = new Map(input.vehicles.map((vehicle) => [vehicle._id, vehicle]));
  const seen = new Map<string, number>();
  const count = (id: string) => seen.set(id, (seen.get(id) ?? 0) + 1);
  for (const entry of body.dropped) count(entry.visitId);
  const pickupOf = new Map<string, string>();
  for (const visit of planned.problem.visits) if (visit.pickupVisitId !== undefined) pickupOf.set(visit.id, visit.pickupVisitId);
  const pickups = new Set(pickupOf.values());
  const servedAt = new Map<string, { vehicleId: string; order: number }>();

  for (const route of body.routes) {
    const fail = (what: string) => violations.push(`${route.vehicleId}: ${what}`);
    const vehicle = vehicles.get(route.vehicleId);
    if (!vehicle) {
      fail("not a vehicle of the run");
      continue;
    }
    const shift = currentOrNextShift(vehicle, runAt);
    const departure = read(route.departure);
    const arrival = read(route.arrival);
    if (departure < shift.start || departure < runMinute) fail(`departs ${route.departure}, before its shift or the run`);
    if (arrival > shift.end) fail(`arrives ${route.arrival}, after its shift ends`);
    if (arrival < departure) fail("arrives before it departs");
    for (const entry of route.breaks) {
      const start = read(entry.start);
      const end = read(entry.end);
      const allowed = shift.breakWindow;
      if (!allowed) fail(`takes a break ${entry.start} it has none of`);
      else {
        const earliest = DateTime.max(allowed.start, runMinute);
        if (start < earliest || end > allowed.end) fail(`break ${entry.start}–${entry.end} outside its allowed window`);
      }
      if (start < departure || end > arrival) fail(`break ${entry.start}–${entry.end} outside the route`);
    }
    const tags = new Set(vehicle.tags);
    // On board when leaving: every ordinary visit's load; pairs load at the pickup.
    const dims = planned.dimensions;
    const onBoard = dims.map(() => 0);
    const isPair = (id: string) => pickupOf.has(id) || pickups.has(id);
    const demand = (id: string, d: number) => visits.get(id)?.capacity[dims[d]!] ?? 0;
    const move = (id: string, sign: number) => {
      for (let d = 0; d < dims.length; d++) onBoard[d]! += sign * demand(id, d);
    };
    for (const trip of route.trips) if (!isPair(trip.visitId)) move(trip.visitId, 1);
    const loadHolds = (where: string) =>
      dims.forEach((dimension, d) => {
        const max = vehicle.capacity[dimension]?.max ?? Infinity;
        if (onBoard[d]! > max + 1e-6) fail(`${dimension} on board ${onBoard[d]} ${where} exceeds ${max}`);
      });
    loadHolds("at departure");
    route.trips.forEach((trip, index) => {
      const visit = visits.get(trip.visitId);
      if (!visit) {
        fail(`serves ${trip.visitId}, not a visit of the run`);
        return;
      }
      count(visit._id);
      servedAt.set(visit._id, { vehicleId: route.vehicleId, order: index });
      for (const tag of visit.tags) if (!tags.has(tag)) fail(`lacks tag ${tag} for ${visit._id}`);
      const eta = read(trip.eta);
      const start = read(trip.serviceStart);
      const etd = read(trip.etd);
      if (!(eta <= start && start <= etd))
        fail(`${visit._id}: eta ${trip.eta}, service ${trip.serviceStart}, etd ${trip.etd} out of order`);
      if (start < runMinute || start < departure || etd > arrival) fail(`${visit._id} served at ${trip.serviceStart}, outside the route`);
      if (visit.timeWindows.length > 0) {
        const inside = visit.timeWindows.some((window) => {
          const bound = (value: string) =>
            value.length > 5 ? DateTime.fromFormat(value, FORMAT, { zone }) : wallClockOn(planningDay, minutesOfDay(value));
          return start >= bound(window.startTime) && start <= bound(window.endTime);
        });
        if (!inside) fail(`${visit._id} served at ${trip.serviceStart}, outside its windows`);
      }
      const pickupId = pickupOf.get(visit._id);
      if (pickupId !== undefined) move(pickupId, -1);
      else if (pickups.has(visit._id)) {
        move(visit._id, 1);
        loadHolds(`after ${visit._id}`);
      } else move(visit._id, -1);
    });
  }
  for (const [deliveryId, pickupId] of pickupOf) {
    const delivery = servedAt.get(deliveryId);
    const pickup = servedAt.get(pickupId);
    if (!delivery && !pickup) continue;
    if (!delivery || !pickup) violations.push(`${deliveryId}: pair with ${pickupId} is served only in part`);
    else if (delivery.vehicleId !== pickup.vehicleId) violations.push(`${deliveryId}: pair with ${pickupId} is split between vehicles`);
    else if (delivery.order < pickup.order) violations.push(`${deliveryId}: delivered before its pickup ${pickupId}`);
  }
  for (const visit of runVisits) {
    const times = seen.get(visit._id) ?? 0;
    if (times !== 1) violations.push(`${visit._id}: appears ${times} times among trips and dropped visits`);
  }
  return violations;
}
