// Independent feasibility check of a solution against its problem. It shares nothing with the solver
// but the public model: it replays each reported schedule leg by leg with freshly computed travel,
// so the benchmark and the tests can trust what the solver says.
import { greatCircleTravel } from "./matrix.ts";
import type { Location, RoutingProblem, RoutingSolution, TravelProvider } from "./model.ts";

const TOLERANCE = 1e-6;

export interface CheckResult {
  violations: string[];
  /** Total distance recomputed from the locations. */
  distance: number;
}

export function checkSolution(problem: RoutingProblem, solution: RoutingSolution): CheckResult {
  const travel = problem.travel ?? greatCircleTravel();
  const violations: string[] = [];
  const visits = new Map(problem.visits.map((visit) => [visit.id, visit]));
  const vehicles = new Map(problem.vehicles.map((vehicle) => [vehicle.id, vehicle]));
  const seen = new Map<string, number>();
  const count = (id: string) => seen.set(id, (seen.get(id) ?? 0) + 1);
  solution.dropped.forEach((dropped) => {
    count(dropped.visitId);
  });
  let total = 0;
  const usedVehicles = new Set<string>();
  // Pickup-and-delivery pairs: delivery id → pickup id, and where each visit is served.
  const pickupOf = new Map<string, string>();
  for (const visit of problem.visits) if (visit.pickupVisitId !== undefined) pickupOf.set(visit.id, visit.pickupVisitId);
  const pickups = new Set(pickupOf.values());
  const servedAt = new Map<string, { vehicleId: string; index: number }>();

  for (const route of solution.routes) {
    const vehicle = vehicles.get(route.vehicleId);
    const fail = (what: string) => violations.push(`${route.vehicleId}: ${what}`);
    if (!vehicle) {
      fail("unknown vehicle");
      continue;
    }
    if (usedVehicles.has(vehicle.id)) fail("vehicle used twice");
    usedVehicles.add(vehicle.id);
    const leg = legMeasure(travel, vehicle.speedKmh ?? 40);
    const tags = new Set(vehicle.tags ?? []);
    // On board when leaving the start: every ordinary visit's demand (pair visits load at the pickup).
    const onBoard: number[] = [];
    const isPairVisit = (id: string) => pickupOf.has(id) || pickups.has(id);
    for (const stop of route.stops) {
      const visit = visits.get(stop.visitId);
      if (visit && !isPairVisit(visit.id))
        (visit.demand ?? []).forEach((q, d) => {
          onBoard[d] = (onBoard[d] ?? 0) + q;
        });
    }
    const capacityHolds = (where: string) =>
      onBoard.forEach((q, d) => {
        if (q > (vehicle.capacity?.[d] ?? Infinity) + TOLERANCE) fail(`load on board ${q} ${where} exceeds capacity in dimension ${d}`);
      });
    capacityHolds("at the start");
    const breaks = vehicle.breaks ?? [];
    if (route.breaks.length !== breaks.length) fail(`takes ${route.breaks.length} of ${breaks.length} breaks`);
    const pendingBreaks = [...route.breaks].sort((a, b) => a.start - b.start);
    let clock = route.departure;
    let at: Location = vehicle.start;
    let distance = 0;
    if (clock < vehicle.workingTime.start - TOLERANCE) fail("leaves before its working time");
    const takeBreaksAfter = (stopIndex: number) => {
      while (pendingBreaks.length > 0 && pendingBreaks[0]!.afterStop === stopIndex) {
        const taken = pendingBreaks.shift()!;
        const rule = breaks.find(
          (b) =>
            Math.abs(taken.end - taken.start - b.duration) <= TOLERANCE &&
            taken.start >= b.earliestStart - TOLERANCE &&
            taken.end <= b.latestEnd + TOLERANCE,
        );
        if (!rule) fail(`break ${taken.start}–${taken.end} matches none of the vehicle's breaks`);
        if (taken.start < clock - TOLERANCE) fail(`break at ${taken.start} starts before ${clock}`);
        clock = taken.end;
      }
    };
    takeBreaksAfter(-1);
    route.stops.forEach((stop, index) => {
      const visit = visits.get(stop.visitId);
      if (!visit) {
        fail(`unknown visit ${stop.visitId}`);
        return;
      }
      count(visit.id);
      for (const tag of visit.requiredTags ?? []) if (!tags.has(tag)) fail(`lacks tag ${tag} for ${visit.id}`);
      servedAt.set(visit.id, { vehicleId: route.vehicleId, index });
      const pickupId = pickupOf.get(visit.id);
      if (pickupId !== undefined) {
        // A delivery unloads its pickup's demand.
        (visits.get(pickupId)?.demand ?? []).forEach((q, d) => {
          onBoard[d] = (onBoard[d] ?? 0) - q;
        });
      } else if (pickups.has(visit.id)) {
        (visit.demand ?? []).forEach((q, d) => {
          onBoard[d] = (onBoard[d] ?? 0) + q;
        });
        capacityHolds(`after ${visit.id}`);
      } else {
        (visit.demand ?? []).forEach((q, d) => {
          onBoard[d] = (onBoard[d] ?? 0) - q;
        });
      }
      const { distance: legDistance, minutes } = leg(at, visit.location);
      distance += legDistance;
      if (stop.start < clock + minutes - TOLERANCE) fail(`${visit.id} starts at ${stop.start}, cannot be there before ${clock + minutes}`);
      const windows = visit.timeWindows?.length ? visit.timeWindows : [{ start: -Infinity, end: Infinity }];
      if (!windows.some((w) => stop.start >= w.start - TOLERANCE && stop.start <= w.end + TOLERANCE)) {
        fail(`${visit.id} starts at ${stop.start}, outside its windows`);
      }
      clock = Math.max(stop.start, clock + minutes) + (visit.visitTime ?? 0);
      at = visit.location;
      takeBreaksAfter(index);
    });
    if (pendingBreaks.length > 0) fail("break scheduled after a missing stop");
    if (vehicle.returnToEnd !== false) {
      const { distance: legDistance, minutes } = leg(at, vehicle.end ?? vehicle.start);
      distance += legDistance;
      clock += minutes;
    }
    if (clock > vehicle.workingTime.end + TOLERANCE) fail(`ends at ${clock}, after its working time`);
    if (clock - route.departure > (vehicle.maxDuration ?? Infinity) + TOLERANCE) fail("exceeds its maximum duration");
    if (distance > (vehicle.maxDistance ?? Infinity) + TOLERANCE) fail("exceeds its maximum distance");
    if (route.stops.length > (vehicle.maxVisits ?? Infinity)) fail("exceeds its maximum visits");
    if (Math.abs(distance - route.distance) > TOLERANCE * Math.max(1, distance))
      fail(`reports distance ${route.distance}, drives ${distance}`);
    total += distance;
  }
  for (const [deliveryId, pickupId] of pickupOf) {
    const delivery = servedAt.get(deliveryId);
    const pickup = servedAt.get(pickupId);
    if (!delivery && !pickup) continue;
    if (!delivery || !pickup) violations.push(`${deliveryId}: pair with ${pickupId} is served only in part`);
    else if (delivery.vehicleId !== pickup.vehicleId) violations.push(`${deliveryId}: pair with ${pickupId} is split between vehicles`);
    else if (delivery.index < pickup.index) violations.push(`${deliveryId}: delivered before its pickup ${pickupId}`);
  }
  for (const visit of problem.visits) {
    const times = seen.get(visit.id) ?? 0;
    if (times !== 1) violations.push(`${visit.id}: appears ${times} times among stops and dropped visits`);
  }
  return { violations, distance: total };
}

function legMeasure(travel: TravelProvider, speedKmh: number) {
  return (from: Location, to: Location) => {
    const distances = travel.distances([from, to]);
    const minutes = travel.travelMinutes(distances, speedKmh, [from, to]);
    return { distance: distances[1]!, minutes: minutes[1]! };
  };
}
