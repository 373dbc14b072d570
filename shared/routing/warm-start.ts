// Warm start: the routes a vehicle is already driving, put in place before construction (a re-plan of a
// live day starts from the plan it replaces). Construction then fills in the rest and the search keeps
// only better plans, so the answer is never worse than carrying on with these routes.
import type { RoutingProblem } from "./model.ts";
import type { Solution } from "./solution.ts";

/**
 * Puts each initial route's visits on its vehicle in the given order, each at the first place after the
 * previous one (before or after the vehicle's breaks) where the route stays feasible with one of the
 * visit's windows; a visit that fits nowhere there, is unknown, dropped before solving, not allowed on the
 * vehicle, or part of a pickup-and-delivery pair (placed whole by construction) is left to construction.
 */
export function seedInitialRoutes(
  solution: Solution,
  initialRoutes: NonNullable<RoutingProblem["initialRoutes"]>,
  problem: RoutingProblem,
): void {
  const { instance } = solution;
  const visitIndex = new Map(problem.visits.map((visit, v) => [visit.id, v]));
  const vehicleIndex = new Map(problem.vehicles.map((vehicle, k) => [vehicle.id, k]));
  for (const initial of initialRoutes) {
    const r = vehicleIndex.get(initial.vehicleId);
    if (r === undefined) continue;
    const route = solution.routes[r]!;
    // After the start node, then after each visit placed.
    let from = 1;
    for (const id of initial.visitIds) {
      const v = visitIndex.get(id);
      if (v === undefined || !solution.unassigned.has(v)) continue;
      if (instance.compatible[v * instance.vehicleCount + r] !== 1) continue;
      if (instance.hasPairs && instance.partner[v]! >= 0) continue;
      placing: for (let position = from; position < route.nodes.length; position++) {
        for (let w = instance.windowOffset[v]!; w < instance.windowOffset[v + 1]!; w++) {
          solution.insert(v, r, position, w);
          if (route.feasible) {
            from = position + 1;
            break placing;
          }
          solution.remove(v);
        }
      }
    }
  }
}

/** Distance driven by `vehicleId` serving `visitIds` in this order from its start (and back to its end when it returns): what carrying a route on costs. */
export function sequenceDistance(problem: RoutingProblem, vehicleId: string, visitIds: readonly string[]): number {
  const vehicle = problem.vehicles.find((candidate) => candidate.id === vehicleId);
  if (!vehicle || visitIds.length === 0) return 0;
  const locations = new Map(problem.visits.map((visit) => [visit.id, visit.location]));
  const stops = visitIds.map((id) => locations.get(id)).filter((location) => location !== undefined);
  const path = [vehicle.start, ...stops, ...(vehicle.returnToEnd === false ? [] : [vehicle.end ?? vehicle.start])];
  const travel = problem.travel;
  if (!travel) throw new Error("sequenceDistance needs the problem's travel provider");
  const matrix = travel.distances(path);
  let distance = 0;
  for (let i = 1; i < path.length; i++) distance += matrix[(i - 1) * path.length + i]!;
  return distance;
}
