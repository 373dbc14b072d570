// A re-plan of a live day (POST /routing/result/{id}/reoptimize, keepVehicle) on the optimizer alone: a
// 600-visit day of 30 vehicles planned in the morning and driven to midday (the stops reached by then are
// served; each vehicle resumes from its last served stop when it left it), 300 visits still on the vans, 20
// new ones. The re-plan pins the 300 to their vehicles (a tag only that vehicle carries, priority 5, as
// shared/domain/runs/build-problem.ts does) and warm-starts from the routes being driven.
// Checked per run: the plan is feasible, no pinned visit moves (none dropped, none on another vehicle), and
// it is never costlier than carrying on (fewer dropped, else fewer vehicles, else no more distance).
import { checkSolution } from "#shared/routing/check";
import { greatCircleTravel } from "#shared/routing/matrix";
import type { RoutingObjective, RoutingProblem, RoutingSolution, RoutingVisit } from "#shared/routing/model";
import { Random } from "#shared/routing/random";
import { solveRouting } from "#shared/routing/solver";
import { sequenceDistance } from "#shared/routing/warm-start";
import { realisticProblem } from "./realistic.ts";
import { benchSolveOptions } from "./run.ts";

const VISITS = 600;
const VEHICLES = 30;
const REMAINING = 300;
const NEW_VISITS = 20;
const pin = (vehicleId: string) => `\u0001pinned:${vehicleId}`;

/** The day at midday: the re-plan's problem, the carried-on routes, and the pinned visit → vehicle. */
function midday(morning: RoutingProblem, plan: RoutingSolution, seed: number) {
  const arrivals = plan.routes.flatMap((route) => route.stops.map((stop) => stop.arrival)).sort((a, b) => a - b);
  // The cut: the moment after which REMAINING stops are still to be served.
  const cut = arrivals[Math.max(0, arrivals.length - REMAINING)] ?? 0;
  const byId = new Map(morning.visits.map((visit) => [visit.id, visit]));
  const pinnedTo = new Map<string, string>();
  const initialRoutes: Array<{ vehicleId: string; visitIds: string[] }> = [];
  const vehicles = morning.vehicles.map((vehicle) => {
    const route = plan.routes.find((candidate) => candidate.vehicleId === vehicle.id);
    if (!route) return { ...vehicle, workingTime: { ...vehicle.workingTime, start: Math.max(vehicle.workingTime.start, cut) } };
    const served = route.stops.filter((stop) => stop.arrival < cut);
    const left = route.stops.filter((stop) => stop.arrival >= cut);
    for (const stop of left) pinnedTo.set(stop.visitId, vehicle.id);
    if (left.length > 0) initialRoutes.push({ vehicleId: vehicle.id, visitIds: left.map((stop) => stop.visitId) });
    const last = served.at(-1);
    const breakTaken = route.breaks.some((entry) => entry.start < cut);
    return {
      ...vehicle,
      start: last ? (byId.get(last.visitId)?.location ?? vehicle.start) : vehicle.start,
      end: vehicle.end ?? vehicle.start,
      workingTime: {
        ...vehicle.workingTime,
        start: Math.max(last?.departure ?? vehicle.workingTime.start, Math.min(cut, route.stops[0]?.arrival ?? cut)),
      },
      breaks: breakTaken ? [] : vehicle.breaks,
      tags: [...(vehicle.tags ?? []), pin(vehicle.id)],
    };
  });
  const random = new Random(seed * 7919);
  const fresh: RoutingVisit[] = Array.from({ length: NEW_VISITS }, (_, i) => {
    const radiusKm = 15 * Math.sqrt(random.next());
    const angle = random.next() * 2 * Math.PI;
    const hub = morning.vehicles[0]!.start;
    return {
      id: `new-${i + 1}`,
      location: {
        lat: hub.lat + (radiusKm / 111.2) * Math.sin(angle),
        lng: hub.lng + (radiusKm / (111.2 * Math.cos((hub.lat * Math.PI) / 180))) * Math.cos(angle),
      },
      visitTime: 10,
      demand: [Math.round(1 + random.next() * 30), 1],
    };
  });
  const visits: RoutingVisit[] = [
    ...[...pinnedTo].map(([id, vehicleId]) => {
      const visit = byId.get(id)!;
      return { ...visit, requiredTags: [...(visit.requiredTags ?? []), pin(vehicleId)], priority: 5 };
    }),
    ...fresh,
  ];
  const problem: RoutingProblem = { visits, vehicles, travel: morning.travel, initialRoutes };
  return { problem, initialRoutes, pinnedTo, cut };
}

export function runReoptimize(options: {
  seconds: number;
  objective: RoutingObjective;
  seeds: number[];
  log: (line: string) => void;
}): void {
  const failures: string[] = [];
  for (const seed of options.seeds) {
    const morning: RoutingProblem = { ...realisticProblem(VISITS, VEHICLES, seed), travel: greatCircleTravel() };
    const plan = solveRouting(morning, benchSolveOptions({ seconds: options.seconds, objective: options.objective, seed }));
    const { problem, initialRoutes, pinnedTo, cut } = midday(morning, plan, seed);
    const carriedDistance = initialRoutes.reduce((sum, route) => sum + sequenceDistance(problem, route.vehicleId, route.visitIds), 0);
    const started = performance.now();
    const replan = solveRouting(problem, benchSolveOptions({ seconds: options.seconds, objective: options.objective, seed: seed + 1 }));
    const seconds = (performance.now() - started) / 1000;
    const { violations, distance } = checkSolution(problem, replan);
    const onVehicle = new Map(replan.routes.flatMap((route) => route.stops.map((stop) => [stop.visitId, route.vehicleId] as const)));
    const moved = [...pinnedTo].filter(([id, vehicleId]) => onVehicle.get(id) !== vehicleId).length;
    const droppedNew = replan.dropped.filter((entry) => !pinnedTo.has(entry.visitId)).length;
    // Carrying on serves the pinned visits only (every new one left out) on the vehicles already out.
    const carried = { dropped: NEW_VISITS, vehicles: initialRoutes.length, distance: carriedDistance };
    const costlier =
      replan.dropped.length > carried.dropped ||
      (replan.dropped.length === carried.dropped &&
        (replan.routes.length > carried.vehicles || (replan.routes.length === carried.vehicles && distance > carried.distance + 1e-6)));
    // The routes that kept only their pinned visits: each no longer than carried on.
    const longerRoutes = replan.routes.filter((route) => {
      const initial = initialRoutes.find((candidate) => candidate.vehicleId === route.vehicleId);
      if (!initial || route.stops.some((stop) => !pinnedTo.has(stop.visitId))) return false;
      return route.distance > sequenceDistance(problem, route.vehicleId, initial.visitIds) + 1e-6;
    }).length;
    options.log(
      `reoptimize seed ${seed}: midday at minute ${Math.round(cut)}, ${pinnedTo.size} pinned + ${NEW_VISITS} new on ${VEHICLES} vehicles; ` +
        `carried on ${(carriedDistance / 1000).toFixed(1)} km with ${NEW_VISITS} new left out; re-plan ${(distance / 1000).toFixed(1)} km, ` +
        `${NEW_VISITS - droppedNew} new served, ${replan.routes.length} vehicles, pinned moved ${moved}, pinned-only routes longer than carried on ${longerRoutes}, ` +
        `${costlier ? "COSTLIER than carrying on" : "not costlier"}, ${violations.length === 0 ? "feasible" : `INFEASIBLE: ${violations.slice(0, 2).join("; ")}`}, ` +
        `${seconds.toFixed(2)} s (${replan.endedBy}, ${replan.iterations} iterations)`,
    );
    if (moved > 0 || costlier || violations.length > 0) failures.push(`seed ${seed}`);
  }
  if (failures.length > 0) {
    options.log(`FAILED: ${failures.join(", ")}`);
    process.exitCode = 1;
  }
}
