// Warm start: the routes a vehicle is already driving, put in place before construction (a re-plan of a
// live day starts from the plan it replaces). Construction then fills in the rest and the search keeps
// only better plans, so the answer is never worse than carrying on with these routes.
import type { RoutingProblem } from "./model.ts";
import type { Solution } from "./solution.ts";

/**
 * Puts each initial route's visits on its vehicle in the given order, each after the previous one, where the
 * route stays feasible with one of the visit's windows. Where a visit goes relative to the vehicle's breaks,
 * and which of its windows it takes, decides whether later ones still fit: each route is seeded four ways
 * (breaks as late or as early as possible, first or last window first) and the way that places the most
 * visits, then drives least, is kept. A visit that fits nowhere there, is unknown, dropped before solving,
 * not allowed on the vehicle, or part of a pickup-and-delivery pair (placed whole by construction) is left
 * to construction.
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
    if (r === undefined || solution.routes[r]!.visitCount > 0) continue;
    const visits = initial.visitIds.flatMap((id) => {
      const v = visitIndex.get(id);
      if (v === undefined || !solution.unassigned.has(v)) return [];
      if (instance.compatible[v * instance.vehicleCount + r] !== 1) return [];
      if (instance.hasPairs && instance.partner[v]! >= 0) return [];
      return [v];
    });
    const unique = [...new Set(visits)];
    let best: { placed: number; distance: number; ways: [boolean, boolean] } | undefined;
    for (const ways of [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ] as Array<[boolean, boolean]>) {
      const placed = seedRoute(solution, r, unique, ...ways);
      const distance = solution.routes[r]!.distance;
      if (!best || placed > best.placed || (placed === best.placed && distance < best.distance - 1e-9)) best = { placed, distance, ways };
      solution.removeAll(unique.filter((v) => solution.routeOf[v] === r));
      if (placed === unique.length && !ways[0] && !ways[1]) break;
    }
    if (best && best.placed < unique.length && seedWhole(solution, r, unique)) continue;
    if (best) seedRoute(solution, r, unique, ...best.ways);
  }
}

/** Insertions tried by the search for a whole seeding before it gives up (the greedy ways then stand). */
const WHOLE_ROUTE_STEPS = 20_000;

/**
 * Every visit of `visits` on route r in order, by a depth-first search over each visit's places and windows
 * (backtracking where a choice leaves a later visit no room), within WHOLE_ROUTE_STEPS insertions. True with
 * the route seeded; false with the route as it was (empty of them).
 */
function seedWhole(solution: Solution, r: number, visits: readonly number[]): boolean {
  const { instance } = solution;
  const route = solution.routes[r]!;
  let steps = WHOLE_ROUTE_STEPS;
  const place = (i: number, from: number): boolean => {
    if (i === visits.length) return true;
    const v = visits[i]!;
    for (let position = from; position < route.nodes.length; position++) {
      for (let w = instance.windowOffset[v]!; w < instance.windowOffset[v + 1]!; w++) {
        if (--steps < 0) return false;
        solution.insert(v, r, position, w);
        if (route.feasible && place(i + 1, position + 1)) return true;
        solution.remove(v);
        if (steps < 0) return false;
      }
    }
    return false;
  };
  return place(0, 1);
}

/** One way of seeding route r with `visits` in order; answers how many it placed. */
function seedRoute(solution: Solution, r: number, visits: readonly number[], breaksEarly: boolean, lastWindowFirst: boolean): number {
  const { instance } = solution;
  const route = solution.routes[r]!;
  let placed = 0;
  // After the start node, then after each visit placed.
  let from = 1;
  for (const v of visits) {
    const last = route.nodes.length - 1;
    const windows: number[] = [];
    for (let w = instance.windowOffset[v]!; w < instance.windowOffset[v + 1]!; w++) windows.push(w);
    if (lastWindowFirst) windows.reverse();
    placing: for (let step = 0; step <= last - from; step++) {
      // Breaks late: the visit goes right after the previous one (before pending breaks); early: after them.
      const position = breaksEarly ? last - step : from + step;
      for (const w of windows) {
        solution.insert(v, r, position, w);
        if (route.feasible) {
          from = position + 1;
          placed++;
          break placing;
        }
        solution.remove(v);
      }
    }
  }
  return placed;
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
