import { describe, expect, it } from "vitest";
import { buildInstance } from "#shared/routing/instance";
import { Random } from "#shared/routing/random";
import type { Route } from "#shared/routing/route-state";
import { Solution } from "#shared/routing/solution";
import { randomFeasibleRoutes, randomProblem } from "./random-problem.ts";

/** Every per-position summary and total of a route, as plain numbers. */
function summaries(route: Route): unknown {
  const n = route.nodes.length;
  const dims = route.instance.dims;
  const upTo = (array: Float64Array | Int32Array, per = 1) => [...array.subarray(0, n * per)];
  return {
    nodes: [...route.nodes],
    forward: [route.fDuration, route.fTimeWarp, route.fEarliest, route.fLatest, route.fDistance, route.fLast].map((a) => upTo(a)),
    backward: [route.bDuration, route.bTimeWarp, route.bEarliest, route.bLatest, route.bDistance, route.bNext].map((a) => upTo(a)),
    nextLocation: upTo(route.nextLocation).slice(0, n - 1),
    loads: [upTo(route.fLoad, dims), upTo(route.bLoad, dims)],
    totals: [route.visitCount, route.distance, route.underload, route.cost, [...route.load]],
  };
}

describe("route summaries kept incrementally", () => {
  it("after removing strings and split strings (removeAll) equal those computed from scratch, to the last bit", () => {
    let checked = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const instance = buildInstance(randomProblem(seed, 18));
      const solution = new Solution(instance, { vehicle: 1000, underload: 10 });
      const random = new Random(seed);
      randomFeasibleRoutes(solution, random);
      for (let trial = 0; trial < 5; trial++) {
        // A random set of visits from one or two routes: contiguous strings, gaps (split strings), breaks between.
        const removed = [...instance.routable].filter((v) => solution.routeOf[v]! >= 0 && random.next() < 0.3);
        if (removed.length === 0) continue;
        const touched = [...new Set(removed.map((v) => solution.routeOf[v]!))];
        solution.begin();
        solution.removeAll(removed);
        for (const r of touched) {
          const route = solution.routes[r]!;
          const incremental = summaries(route);
          route.update();
          expect(incremental).toEqual(summaries(route));
          for (let i = 0; i < route.nodes.length; i++) {
            expect(solution.routeOf[route.nodes[i]!]).toBe(r);
            expect(solution.positionOf[route.nodes[i]!]).toBe(i);
          }
          checked++;
        }
        for (const v of removed) expect(solution.routeOf[v]).toBe(-1);
        if (random.next() < 0.5) solution.commit();
        else solution.rollback();
      }
    }
    expect(checked).toBeGreaterThan(100);
  }, 60_000);

  it("a rollback brings back the routes' nodes and the visits left out, and reuses no array a route still holds", () => {
    const instance = buildInstance(randomProblem(7, 18));
    const solution = new Solution(instance, { vehicle: 1000, underload: 10 });
    const random = new Random(7);
    randomFeasibleRoutes(solution, random);
    const before = solution.snapshot();
    for (let step = 0; step < 50; step++) {
      solution.begin();
      const routed = [...instance.routable].filter((v) => solution.routeOf[v]! >= 0);
      solution.removeAll(routed.filter(() => random.next() < 0.3));
      if (step % 2 === 0) solution.rollback();
      else {
        solution.commit();
        solution.restore(before);
      }
      expect(solution.snapshot().routes).toEqual(before.routes);
      expect([...solution.unassigned].sort()).toEqual([...before.unassigned].sort());
      const arrays = solution.routes.map((route) => route.nodes);
      expect(new Set(arrays).size).toBe(arrays.length);
    }
  });
});
