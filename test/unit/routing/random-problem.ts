// Small random problems on the plane (travel time = distance) for property tests, and a reference
// route evaluation that replays a node list step by step, independently of the segment summaries.
import { expect } from "vitest";
import { buildInstance, type Instance } from "#shared/routing/instance";
import { euclideanTravel } from "#shared/routing/matrix";
import type { RoutingProblem } from "#shared/routing/model";
import { Random } from "#shared/routing/random";
import type { Route } from "#shared/routing/route-state";
import { RuinRecreate } from "#shared/routing/ruin-recreate";
import { type Acceptance, type AnnealOptions, anneal, type Budget, Incumbent } from "#shared/routing/search";
import { Solution } from "#shared/routing/solution";

/**
 * Vehicles 0 and 1 are interchangeable and take two breaks; vehicle 2 is smaller, breakless, ends
 * elsewhere and has tight limits on visits, distance and duration; some visits have two windows. Everything is wide enough for most visits to fit somewhere.
 */
export function randomProblem(seed: number, visitCount = 14): RoutingProblem {
  const random = new Random(seed);
  const coordinate = () => Math.round(random.next() * 100);
  const withBreaks = {
    workingTime: { start: 0, end: 600 },
    maxDuration: 480,
    breaks: [
      { earliestStart: 150, latestEnd: 260, duration: 20 },
      { earliestStart: 230, latestEnd: 400, duration: 15 },
    ],
    capacity: [60, 10],
  };
  return {
    travel: euclideanTravel(),
    visits: Array.from({ length: visitCount }, (_, i) => {
      const start = Math.round(random.next() * 400);
      const windows = [{ start, end: start + 60 + Math.round(random.next() * 120) }];
      if (random.next() < 0.3) windows.push({ start: start + 250, end: start + 330 });
      return {
        id: `visit-${i}`,
        location: { lat: coordinate(), lng: coordinate() },
        visitTime: Math.round(random.next() * 15),
        timeWindows: windows,
        demand: [1 + random.int(15), random.int(4)],
      };
    }),
    vehicles: [
      { id: "a", start: { lat: 50, lng: 50 }, ...withBreaks },
      { id: "b", start: { lat: 50, lng: 50 }, ...withBreaks },
      {
        id: "c",
        start: { lat: 50, lng: 50 },
        end: { lat: 0, lng: 0 },
        workingTime: { start: 0, end: 600 },
        capacity: [40, 6],
        minCapacity: [20, 0],
        maxVisits: 6,
        maxDistance: 400,
        maxDuration: 330,
      },
    ],
  };
}

export interface ReferenceRoute {
  feasible: boolean;
  cost: number;
}

/**
 * Replays `nodes` on `route`'s vehicle with the solution's windows in force, leaving at each time where
 * the schedule changes shape (the working-time start, or so as to reach some node exactly when it opens
 * or closes), and keeps the shortest feasible schedule.
 */
export function referenceRoute(solution: Solution, route: Route, nodes: readonly number[]): ReferenceRoute {
  const instance: Instance = solution.instance;
  const { open } = solution.windows;
  const { dims, demand, location, locationCount, distance, service, isBreak } = instance;
  const vehicle = route.vehicle;
  const departures = [open[nodes[0]!]!];
  let offset = 0;
  let at = location[nodes[0]!]!;
  for (const node of nodes.slice(1)) {
    if (!isBreak[node]) {
      offset += route.time[at * locationCount + location[node]!]!;
      at = location[node]!;
    }
    for (const bound of [open[node]!, solution.windows.close[node]!]) {
      if (bound - offset > departures[0]!) departures.push(bound - offset);
    }
    offset += service[node]!;
  }
  const shortest = Math.min(...departures.map((departure) => replay(solution, route, nodes, departure)));
  let driven = 0;
  let visits = 0;
  at = location[nodes[0]!]!;
  const load = new Array<number>(dims).fill(0);
  for (const node of nodes) {
    if (isBreak[node]) continue;
    driven += distance[at * locationCount + location[node]!]!;
    at = location[node]!;
    if (node < instance.visitCount) {
      visits++;
      for (let d = 0; d < dims; d++) load[d] = load[d]! + demand[node * dims + d]!;
    }
  }
  let feasible = shortest <= instance.maxDuration[vehicle]!;
  let underload = 0;
  for (let d = 0; d < dims; d++) {
    if (load[d]! > instance.capacity[vehicle * dims + d]!) feasible = false;
    underload += Math.max(0, instance.minCapacity[vehicle * dims + d]! - load[d]!);
  }
  if (visits > instance.maxVisits[vehicle]! || driven > instance.maxDistance[vehicle]!) feasible = false;
  const cost = visits > 0 ? solution.weights.vehicle * instance.fixedCost[vehicle]! + driven + solution.weights.underload * underload : 0;
  return { feasible, cost };
}

/** Duration of the as-soon-as-possible schedule leaving at `departure`, Infinity if a window is missed. */
function replay(solution: Solution, route: Route, nodes: readonly number[], departure: number): number {
  const { location, locationCount, service, isBreak } = solution.instance;
  const { open, close } = solution.windows;
  let clock = departure;
  let at = location[nodes[0]!]!;
  for (const node of nodes.slice(1)) {
    if (!isBreak[node]) {
      clock += route.time[at * locationCount + location[node]!]!;
      at = location[node]!;
    }
    clock = Math.max(clock, open[node]!);
    if (clock > close[node]! + 1e-9) return Infinity;
    clock += service[node]!;
  }
  return clock - departure;
}

/** Inserts the routable visits one by one at a random position where the route stays feasible. */
export function randomFeasibleRoutes(solution: Solution, random: Random): void {
  const { instance } = solution;
  for (const v of random.shuffle([...instance.routable])) {
    const options: [number, number, number][] = [];
    solution.routes.forEach((route, r) => {
      if (!instance.compatible[v * instance.vehicleCount + route.vehicle]) return;
      for (let w = instance.windowOffset[v]!; w < instance.windowOffset[v + 1]!; w++) {
        for (let p = 1; p < route.nodes.length; p++) {
          solution.insert(v, r, p, w);
          if (referenceRoute(solution, route, route.nodes).feasible) options.push([r, p, w]);
          solution.remove(v);
        }
      }
    });
    if (options.length > 0) {
      const [r, p, w] = options[random.int(options.length)]!;
      solution.insert(v, r, p, w);
    }
  }
}

/** Every route feasible by the independent replay, and every routable visit either routed once or left out. */
export function expectFeasibleWithEveryVisitOnce(solution: Solution): void {
  for (const route of solution.routes) expect(referenceRoute(solution, route, route.nodes).feasible).toBe(true);
  const routed = solution.routes.flatMap((route) => route.nodes.filter((node) => node < solution.instance.visitCount));
  expect(new Set(routed).size).toBe(routed.length);
  expect(routed.length + solution.unassigned.size).toBe(solution.instance.routable.length);
}

/** What a test may set of `anneal`'s options: the acceptance, and how a step recreates. */
type AnnealVariant = Partial<Pick<AnnealOptions, "stepSchedule" | "penalised" | "recreate" | "midway">>;

/**
 * Anneals a random feasible plan of `randomProblem(seed, 18)` (temperatures 20 → 0.2, no polish) under
 * `budget` with the `variant` given — or built from the plan's solution, ruin-and-recreate and random
 * stream before the search starts; `onStep` sees each step's acceptance before the default recreate.
 * Answers the best plan (restored into `solution`) and the plan the search ended on.
 */
export function annealRandomPlan(
  seed: number,
  budget: Budget,
  variant: AnnealVariant | ((parts: { solution: Solution; ruinRecreate: RuinRecreate; random: Random }) => AnnealVariant),
  onStep: (acceptance: Acceptance, solution: Solution) => void = () => {},
) {
  const solution = new Solution(buildInstance(randomProblem(seed, 18)), { vehicle: 1000, underload: 7 });
  const random = new Random(seed);
  randomFeasibleRoutes(solution, random);
  const ruinRecreate = new RuinRecreate(solution, random);
  const options = typeof variant === "function" ? variant({ solution, ruinRecreate, random }) : variant;
  const incumbent = new Incumbent(solution);
  anneal({
    solution,
    ruinRecreate,
    budget,
    random,
    incumbent,
    schedule: { startTemperature: 20, endTemperature: 0.2 },
    polish: () => {},
    recreate: (_removed, acceptance) => {
      onStep(acceptance, solution);
      ruinRecreate.recreate([...solution.unassigned], true);
    },
    ...options,
  });
  const current = solution.snapshot();
  solution.restore(incumbent.snapshot);
  return { solution, incumbent: incumbent.snapshot, current };
}
