import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readVrptw, toRoutingProblem } from "../../../bench/routing/vrptw.ts";
import { VRPTW_DATA_DIR } from "../../../bench/routing/run.ts";
import { checkSolution } from "#shared/routing/check";
import { constructByRegret } from "#shared/routing/construct";
import { buildInstance } from "#shared/routing/instance";
import { euclideanTravel } from "#shared/routing/matrix";
import { Random } from "#shared/routing/random";
import { EjectionSearch, minimiseRoutes, ROUTE_MINIMISATION_PARAMETERS, RouteMinimiser } from "#shared/routing/route-min";
import { Route } from "#shared/routing/route-state";
import { Budget, Incumbent } from "#shared/routing/search";
import { Solution } from "#shared/routing/solution";
import { solveRouting } from "#shared/routing/solver";
import { randomFeasibleRoutes, randomProblem, referenceRoute } from "./random-problem.ts";

const seeds = fc.integer({ min: 1, max: 1_000_000 });

function randomSolution(seed: number, visits = 14): Solution {
  const solution = new Solution(buildInstance(randomProblem(seed, visits)), { vehicle: 1000, underload: 7 });
  randomFeasibleRoutes(solution, new Random(seed));
  return solution;
}

function expectFeasibleRoutes(solution: Solution): void {
  for (const route of solution.routes) {
    if (route.visitCount === 0) continue;
    expect(referenceRoute(solution, route, route.nodes).feasible).toBe(true);
    for (const node of route.nodes) {
      if (node < solution.instance.visitCount)
        expect(solution.instance.compatible[node * solution.instance.vehicleCount + route.vehicle]).toBe(1);
    }
  }
}

/** Every subset of `candidates` with at most k elements. */
function subsets(candidates: number[], k: number): number[][] {
  const out: number[][] = [[]];
  const grow = (from: number, chosen: number[]) => {
    if (chosen.length === k) return;
    for (let i = from; i < candidates.length; i++) {
      const next = [...chosen, candidates[i]!];
      out.push(next);
      grow(i + 1, next);
    }
  };
  grow(0, []);
  return out;
}

describe("ejection search", { timeout: 60_000 }, () => {
  it("finds the lowest-penalty ejection set, like brute force over every set", () => {
    let visited = 0;
    let enumerated = 0;
    fc.assert(
      fc.property(seeds, (seed) => {
        const solution = randomSolution(seed);
        const { instance, windows } = solution;
        const random = new Random(seed + 1);
        const penalty = new Float64Array(instance.visitCount);
        for (let v = 0; v < instance.visitCount; v++) penalty[v] = 1 + random.int(4);
        const maxEjected = 3;
        const search = new EjectionSearch(instance, windows, maxEjected);
        const routed = [...instance.routable].filter((v) => solution.routeOf[v]! >= 0);
        if (routed.length === 0) return;
        const v = routed[random.int(routed.length)]!;
        solution.remove(v);
        const out: number[] = [];
        for (const route of solution.routes) {
          if (!instance.compatible[v * instance.vehicleCount + route.vehicle]) continue;
          const scratch = new Route(instance, route.vehicle, windows, solution.weights);
          for (let w = instance.windowOffset[v]!; w < instance.windowOffset[v + 1]!; w++) {
            windows.open[v] = instance.windowOpen[w]!;
            windows.close[v] = instance.windowClose[w]!;
            for (let p = 1; p < route.nodes.length; p++) {
              scratch.nodes = [...route.nodes.slice(0, p), v, ...route.nodes.slice(p)];
              scratch.update();
              const candidates = scratch.nodes.flatMap((node, q) => (node < instance.visitCount && q !== p ? [q] : []));
              let expected = Infinity;
              for (const set of subsets(candidates, maxEjected)) {
                enumerated++;
                const sum = set.reduce((total, q) => total + penalty[scratch.nodes[q]!]!, 0);
                if (sum >= expected) continue;
                if (
                  referenceRoute(
                    solution,
                    scratch,
                    scratch.nodes.filter((_, q) => !set.includes(q)),
                  ).feasible
                )
                  expected = sum;
              }
              const found = search.search(scratch, p, penalty, Infinity, out);
              visited += search.visited;
              expect(found).toBe(expected);
              if (found < Infinity) {
                expect(out.every((q, i) => q !== p && scratch.nodes[q]! < instance.visitCount && (i === 0 || q > out[i - 1]!))).toBe(true);
                expect(out.reduce((total, q) => total + penalty[scratch.nodes[q]!]!, 0)).toBe(found);
                expect(
                  referenceRoute(
                    solution,
                    scratch,
                    scratch.nodes.filter((_, q) => !out.includes(q)),
                  ).feasible,
                ).toBe(true);
                // A bound at the optimum finds nothing cheaper.
                expect(search.search(scratch, p, penalty, found, out)).toBe(Infinity);
              }
            }
          }
        }
      }),
      { numRuns: 30 },
    );
    // The pruning visits fewer partial sets than there are sets.
    expect(visited).toBeLessThan(enumerated);
  });
});

describe("the ejection's node budget (maxSearchNodes)", () => {
  /**
   * One van's day (minute 0 to 602) full with thirty 20-minute visits one minute from its start; a 70-minute visit
   * left out needs four of them ejected, so no set of three works and nothing prunes the search early.
   */
  function fullDay(): Solution {
    const here = { lat: 1, lng: 0 };
    const instance = buildInstance({
      travel: euclideanTravel(),
      visits: [
        ...Array.from({ length: 30 }, (_, i) => ({ id: `short-${i}`, location: here, visitTime: 20 })),
        { id: "long", location: here, visitTime: 70 },
      ],
      vehicles: [{ id: "van", start: { lat: 0, lng: 0 }, workingTime: { start: 0, end: 602 } }],
    });
    const solution = new Solution(instance, { vehicle: 1000, underload: 0 });
    for (let v = 0; v < 30; v++) solution.insert(v, 0, v + 1, instance.windowOffset[v]!);
    expect(solution.routes[0]!.feasible).toBe(true);
    expect([...solution.unassigned]).toEqual([30]);
    return solution;
  }

  it("stops a try after the budget's nodes, with the plan unchanged, where unbounded it visits every set of three at every position", () => {
    const unbounded = new RouteMinimiser(fullDay(), new Random(1), { ...ROUTE_MINIMISATION_PARAMETERS, maxEjected: 3 });
    expect(unbounded.insertEjecting(30)).toBeUndefined();
    expect(unbounded.searchNodes).toBeGreaterThan(100_000); // 31 positions × (1 + 30 + 435 + 4,060) nodes

    const solution = fullDay();
    const before = [...solution.routes[0]!.nodes];
    const bounded = new RouteMinimiser(solution, new Random(1), { ...ROUTE_MINIMISATION_PARAMETERS, maxEjected: 3, maxSearchNodes: 5_000 });
    expect(bounded.insertEjecting(30)).toBeUndefined();
    expect(bounded.searchNodes).toBe(5_000);
    expect(solution.routes[0]!.nodes).toEqual(before);
    expect([...solution.unassigned]).toEqual([30]);
  });

  it("still finds a set within the budget when one works", () => {
    const solution = fullDay();
    const minimiser = new RouteMinimiser(solution, new Random(1), {
      ...ROUTE_MINIMISATION_PARAMETERS,
      maxEjected: 4,
      maxSearchNodes: 50_000,
    });
    const ejected = minimiser.insertEjecting(30);
    expect(ejected).toHaveLength(4);
    expect(minimiser.searchNodes).toBeLessThanOrEqual(50_000);
    expect(solution.routeOf[30]).toBe(0);
    expect(solution.routes[0]!.feasible).toBe(true);
  });
});

describe("route minimisation", { timeout: 60_000 }, () => {
  it("counts a visit's failures to find a feasible place and keeps every route feasible while ejecting", () => {
    fc.assert(
      fc.property(seeds, (seed) => {
        const solution = randomSolution(seed, 20);
        const { instance } = solution;
        const left = new Set(solution.unassigned);
        const minimiser = new RouteMinimiser(solution, new Random(seed));
        const pool = minimiser.emptyARoute();
        for (let step = 0; step < 30 && pool.length > 0; step++) {
          const v = pool.at(-1)!;
          const before = minimiser.penalty.slice();
          minimiser.step(pool);
          const raised = [...minimiser.penalty].flatMap((p, u) => (p !== before[u] ? [u] : []));
          expect(raised.length).toBeLessThanOrEqual(1);
          if (raised.length === 1) {
            expect(raised[0]).toBe(v);
            expect(minimiser.penalty[v]).toBe(before[v]! + 1);
          } else {
            expect(solution.routeOf[v]).toBeGreaterThanOrEqual(0);
          }
          expectFeasibleRoutes(solution);
          // Every visit is routed, in the pool, or was left out from the start.
          for (const u of instance.routable) {
            const where = (solution.routeOf[u]! >= 0 ? 1 : 0) + (pool.includes(u) ? 1 : 0) + (left.has(u) ? 1 : 0);
            expect(where).toBe(1);
          }
          expect(new Set(pool).size).toBe(pool.length);
        }
      }),
      { numRuns: 20 },
    );
  });

  it("returns a feasible solution with no visit lost and no vehicle added, the same for the same seed", () => {
    fc.assert(
      fc.property(seeds, (seed) => {
        const run = () => {
          const solution = new Solution(buildInstance(randomProblem(seed, 24)), { vehicle: 1000, underload: 7 });
          constructByRegret(solution);
          const vehicles = solution.vehiclesUsed;
          const unassigned = solution.unassigned.size;
          const budget = new Budget(() => 0, Infinity, 80);
          minimiseRoutes(solution, budget, 1, new Incumbent(solution), new Random(seed));
          expectFeasibleRoutes(solution);
          expect(solution.unassigned.size).toBeLessThanOrEqual(unassigned);
          expect(solution.vehiclesUsed).toBeLessThanOrEqual(vehicles);
          return solution.snapshot();
        };
        expect(run()).toEqual(run());
      }),
      { numRuns: 15 },
    );
  });

  it("reaches the best-known vehicle count on Solomon R108 (9) within an iteration limit", () => {
    const problem = toRoutingProblem(readVrptw(join(VRPTW_DATA_DIR, "solomon", "R108.txt")));
    const solution = solveRouting(problem, { objective: "hierarchical", seed: 1, maxIterations: 6000, timeLimitMs: Infinity });
    expect(checkSolution(problem, solution).violations).toEqual([]);
    expect(solution.dropped).toEqual([]);
    expect(solution.routes).toHaveLength(9);
  }, 60_000); // 6,000 iterations: a few seconds alone, more on a shared machine

  it("brings back the visits the first solution left out before it empties a route, and keeps the fewest left out when one fits nowhere", () => {
    // 8 plain vehicles of at most 5 visits, 38 visits on a grid: at most 40 places, so 8 routes are needed.
    const at = (i: number) => ({ lat: 10 + (i % 6) * 2, lng: 10 + Math.floor(i / 6) * 2 });
    const routing = (visits: number) => ({
      travel: euclideanTravel(),
      visits: Array.from({ length: visits }, (_, i) => ({ id: `v${i}`, location: at(i), visitTime: 5 })),
      vehicles: Array.from({ length: 8 }, (_, k) => ({
        id: `k${k}`,
        start: { lat: 0, lng: 0 },
        workingTime: { start: 0, end: 1000 },
        maxVisits: 5,
      })),
    });
    for (const [visits, leftOut] of [
      [38, 0],
      [41, 1],
    ] as const) {
      const instance = buildInstance(routing(visits));
      const solution = new Solution(instance, { vehicle: 1_000_000, underload: 0 });
      // Seven routes full, the eighth with one visit: the rest left out, as a tight regret insertion can leave them.
      for (let v = 0; v < 36; v++)
        solution.insert(v, Math.floor(v / 5), solution.routes[Math.floor(v / 5)]!.nodes.length - 1, instance.windowOffset[v]!);
      expect(solution.unassigned.size).toBe(visits - 36);
      const incumbent = new Incumbent(solution);
      const budget = new Budget(() => 0, Infinity, 40_000);
      minimiseRoutes(solution, budget, 0.5, incumbent, new Random(visits));
      // Before, the visits left out stayed out: the phase only ever emptied routes.
      expect(solution.unassigned.size).toBe(leftOut);
      expect(solution.vehiclesUsed).toBe(8);
      expectFeasibleRoutes(solution);
    }
  });
});
