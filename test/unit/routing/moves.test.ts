import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildInstance } from "#shared/routing/instance";
import { Moves } from "#shared/routing/local-search";
import { Random } from "#shared/routing/random";
import type { Insertion } from "#shared/routing/route-state";
import { Solution } from "#shared/routing/solution";
import { randomFeasibleRoutes, randomProblem, referenceRoute } from "./random-problem.ts";

/** A solution with random feasible routes; vehicle weight 1000 so that emptying a route shows in the cost. */
function randomSolution(seed: number): Solution {
  const solution = new Solution(buildInstance(randomProblem(seed)), { vehicle: 1000, underload: 7 });
  randomFeasibleRoutes(solution, new Random(seed));
  return solution;
}

function routedPairs(solution: Solution): [number, number][] {
  const routed = [...solution.instance.routable].filter((v) => solution.routeOf[v]! >= 0);
  return routed.flatMap((u) => routed.filter((v) => solution.routeOf[v] !== solution.routeOf[u]).map((v): [number, number] => [u, v]));
}

/** The reference cost change of replacing two routes' node lists, or Infinity if either becomes infeasible. */
function referenceDelta(solution: Solution, ra: number, a: number[], rb: number, b: number[]): number {
  const routeA = solution.routes[ra]!;
  const routeB = solution.routes[rb]!;
  const newA = referenceRoute(solution, routeA, a);
  const newB = referenceRoute(solution, routeB, b);
  if (!newA.feasible || !newB.feasible) return Infinity;
  return newA.cost + newB.cost - referenceRoute(solution, routeA, routeA.nodes).cost - referenceRoute(solution, routeB, routeB.nodes).cost;
}

function expectSameDelta(actual: number, expected: number): void {
  if (expected === Infinity) expect(actual).toBe(Infinity);
  else expect(actual).toBeCloseTo(expected, 6);
}

const seeds = fc.integer({ min: 1, max: 1_000_000 });

describe("segment summaries", () => {
  it("agree with a step-by-step replay of each random feasible route", () => {
    fc.assert(
      fc.property(seeds, (seed) => {
        const solution = randomSolution(seed);
        for (const route of solution.routes) {
          const reference = referenceRoute(solution, route, route.nodes);
          expect(reference.feasible).toBe(true);
          expect(route.feasible).toBe(true);
          expect(route.cost).toBeCloseTo(reference.cost, 6);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("price every insertion like a full recomputation of the route", () => {
    fc.assert(
      fc.property(seeds, (seed) => {
        const solution = randomSolution(seed);
        const { instance } = solution;
        const out: Insertion = { cost: 0, position: 0, window: 0 };
        for (const v of instance.routable) {
          const r0 = solution.routeOf[v]!;
          if (r0 >= 0) solution.remove(v);
          for (const route of solution.routes) {
            const r = solution.routes.indexOf(route);
            if (!instance.compatible[v * instance.vehicleCount + route.vehicle]) continue;
            let expected = Infinity;
            const before = referenceRoute(solution, route, route.nodes).cost;
            for (let w = instance.windowOffset[v]!; w < instance.windowOffset[v + 1]!; w++) {
              for (let p = 1; p < route.nodes.length; p++) {
                solution.insert(v, r, p, w);
                const after = referenceRoute(solution, route, route.nodes);
                if (after.feasible) expected = Math.min(expected, after.cost - before);
                solution.remove(v);
              }
            }
            const found = route.findInsertion(v, Infinity, undefined, out);
            expectSameDelta(found ? out.cost : Infinity, expected);
          }
          if (r0 >= 0) {
            const route = solution.routes[r0]!;
            route.findInsertion(v, Infinity, undefined, out);
            solution.insert(v, r0, out.position, out.window);
          }
        }
      }),
      { numRuns: 25 },
    );
  });

  it("price every removal like a full recomputation of the route", () => {
    fc.assert(
      fc.property(seeds, (seed) => {
        const solution = randomSolution(seed);
        for (const route of solution.routes) {
          for (let i = 1; i < route.nodes.length - 1; i++) {
            if (route.nodes[i]! >= solution.instance.visitCount) continue;
            const without = route.nodes.filter((_, j) => j !== i);
            const reference = referenceRoute(solution, route, without);
            const expected = reference.feasible ? reference.cost - route.cost : Infinity;
            expectSameDelta(route.removalDelta(i), expected);
          }
        }
      }),
      { numRuns: 40 },
    );
  });
});

describe("local-search moves", () => {
  it("relocate: the O(1) delta equals a full recomputation on random routes", () => {
    fc.assert(
      fc.property(seeds, (seed) => {
        const solution = randomSolution(seed);
        const moves = new Moves(solution);
        for (const [u, v] of routedPairs(solution)) {
          for (const after of [false, true]) {
            const ra = solution.routeOf[u]!;
            const rb = solution.routeOf[v]!;
            const a = solution.routes[ra]!.nodes.filter((node) => node !== u);
            const b = [...solution.routes[rb]!.nodes];
            b.splice(solution.positionOf[v]! + (after ? 1 : 0), 0, u);
            const compatible = solution.instance.compatible[u * solution.instance.vehicleCount + solution.routes[rb]!.vehicle] === 1;
            const expected = compatible ? referenceDelta(solution, ra, a, rb, b) : Infinity;
            expectSameDelta(moves.relocateDelta(u, v, after), expected);
          }
        }
      }),
      { numRuns: 30 },
    );
  });

  it("swap: the O(1) delta equals a full recomputation on random routes", () => {
    fc.assert(
      fc.property(seeds, (seed) => {
        const solution = randomSolution(seed);
        const moves = new Moves(solution);
        for (const [u, v] of routedPairs(solution)) {
          const ra = solution.routeOf[u]!;
          const rb = solution.routeOf[v]!;
          const a = solution.routes[ra]!.nodes.map((node) => (node === u ? v : node));
          const b = solution.routes[rb]!.nodes.map((node) => (node === v ? u : node));
          expectSameDelta(moves.swapDelta(u, v), referenceDelta(solution, ra, a, rb, b));
        }
      }),
      { numRuns: 30 },
    );
  });

  it("2-opt*: the O(1) delta equals a full recomputation where the move is allowed", () => {
    let allowed = 0;
    fc.assert(
      fc.property(seeds, (seed) => {
        const solution = randomSolution(seed);
        const moves = new Moves(solution);
        for (const [u, v] of routedPairs(solution)) {
          const ra = solution.routeOf[u]!;
          const rb = solution.routeOf[v]!;
          const routeA = solution.routes[ra]!.nodes;
          const routeB = solution.routes[rb]!.nodes;
          const i = solution.positionOf[u]!;
          const j = solution.positionOf[v]!;
          const a = [...routeA.slice(0, i + 1), ...routeB.slice(j, -1), routeA.at(-1)!];
          const b = [...routeB.slice(0, j), ...routeA.slice(i + 1, -1), routeB.at(-1)!];
          const { instance } = solution;
          const breakMoves = [...a, ...b].some((node, k) => instance.isBreak[node] && !(k < a.length ? routeA : routeB).includes(node));
          const sameClass = instance.vehicleClass[solution.routes[ra]!.vehicle] === instance.vehicleClass[solution.routes[rb]!.vehicle];
          const delta = moves.twoOptStarDelta(u, v);
          if (!sameClass || breakMoves) {
            expect(delta).toBe(Infinity);
            continue;
          }
          allowed++;
          expectSameDelta(delta, referenceDelta(solution, ra, a, rb, b));
        }
      }),
      { numRuns: 30 },
    );
    expect(allowed).toBeGreaterThan(0);
  });

  it("applying a move changes the solution cost by its delta", () => {
    fc.assert(
      fc.property(seeds, (seed) => {
        const solution = randomSolution(seed);
        const moves = new Moves(solution);
        for (const [u, v] of routedPairs(solution)) {
          const before = solution.cost;
          const delta = moves.twoOptStarDelta(u, v);
          if (delta < Infinity) {
            moves.applyTwoOptStar(u, v);
            expect(solution.cost - before).toBeCloseTo(delta, 6);
            expect(solution.routes.every((route) => route.feasible)).toBe(true);
            return;
          }
        }
      }),
      { numRuns: 30 },
    );
  });
});
