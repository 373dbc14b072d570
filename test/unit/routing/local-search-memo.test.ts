import { describe, expect, it } from "vitest";
import { buildInstance } from "#shared/routing/instance";
import { improveLocally, Moves } from "#shared/routing/local-search";
import { Random } from "#shared/routing/random";
import { RuinRecreate } from "#shared/routing/ruin-recreate";
import { Solution } from "#shared/routing/solution";
import { randomFeasibleRoutes, randomProblem } from "./random-problem.ts";

/** The neighbour pairs (u, v) in different routes where relocate, swap or 2-opt* would still improve the plan. */
function improvingPairs(solution: Solution): string[] {
  const { instance, routeOf } = solution;
  const moves = new Moves(solution);
  const tried = Math.min(30, instance.neighbourCount);
  const found: string[] = [];
  for (const u of instance.routable) {
    if (routeOf[u]! < 0) continue;
    for (let k = 0; k < tried; k++) {
      const v = instance.neighbours[u * instance.neighbourCount + k]!;
      if (routeOf[v]! < 0 || routeOf[v] === routeOf[u]) continue;
      const best = Math.min(
        moves.relocateDelta(u, v, false),
        moves.relocateDelta(u, v, true),
        moves.swapDelta(u, v),
        moves.twoOptStarDelta(u, v),
      );
      if (best < -1e-9) found.push(`${u}-${v}: ${best}`);
    }
  }
  return found;
}

describe("local search skipping route pairs that did not change since they last failed", () => {
  it("still ends where no neighbour move improves, call after call on a changing plan", () => {
    let calls = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const instance = buildInstance(randomProblem(seed, 20));
      const solution = new Solution(instance, { vehicle: 1000, underload: 10 });
      const random = new Random(seed);
      randomFeasibleRoutes(solution, random);
      const ruinRecreate = new RuinRecreate(solution, random);
      for (let step = 0; step < 8; step++) {
        improveLocally(solution);
        calls++;
        expect(improvingPairs(solution)).toEqual([]);
        // The next call meets some routes changed (a ruin and recreate), some not, and some rolled back to a
        // version it has seen.
        solution.begin();
        ruinRecreate.ruin();
        ruinRecreate.recreate([...solution.unassigned], true);
        if (step % 3 === 2) solution.rollback();
        else solution.commit();
      }
    }
    expect(calls).toBe(96);
  });
});
