import { describe, expect, it } from "vitest";
import { checkSolution } from "#shared/routing/check";
import type { RoutingProblem, RoutingSolution } from "#shared/routing/model";
import { solveRouting } from "#shared/routing/solver";
import { sequenceDistance } from "#shared/routing/warm-start";
import { randomProblem } from "./random-problem.ts";

/**
 * A warm start (problem.initialRoutes: the routes being driven) is put in place before construction, and
 * the search keeps only better plans: the answer is never worse than carrying on with those routes.
 */
const routesOf = (solution: RoutingSolution) =>
  solution.routes.map((route) => ({ vehicleId: route.vehicleId, visitIds: route.stops.map((stop) => stop.visitId) }));

/** Lexicographic: fewer dropped, then fewer vehicles, then less distance. */
function notWorse(answer: RoutingSolution, reference: RoutingSolution): boolean {
  if (answer.dropped.length !== reference.dropped.length) return answer.dropped.length < reference.dropped.length;
  if (answer.totals.vehicles !== reference.totals.vehicles) return answer.totals.vehicles < reference.totals.vehicles;
  return answer.totals.distance <= reference.totals.distance + 1e-6;
}

describe("warm start", () => {
  it("with no search at all, starting from a good plan answers a plan at least as good; cold it is worse on some problems", () => {
    let coldWorse = 0;
    for (let seed = 1; seed <= 5; seed++) {
      const problem = randomProblem(seed, 30);
      const good = solveRouting(problem, { seed, maxIterations: 1500, timeLimitMs: Infinity });
      const warmProblem: RoutingProblem = { ...problem, initialRoutes: routesOf(good) };
      const warm = solveRouting(warmProblem, { seed: seed + 100, maxIterations: 0, timeLimitMs: Infinity });
      expect(checkSolution(problem, warm).violations).toEqual([]);
      expect(notWorse(warm, good), `seed ${seed}`).toBe(true);
      const cold = solveRouting(problem, { seed: seed + 100, maxIterations: 0, timeLimitMs: Infinity });
      if (!notWorse(cold, good)) coldWorse++;
    }
    expect(coldWorse).toBeGreaterThan(0);
  }, 60_000);

  it("keeps the given order where it is feasible: one vehicle, visits pinned in an order, no search", () => {
    const problem = randomProblem(5, 6);
    const vehicle = problem.vehicles[0]!;
    const solo: RoutingProblem = {
      ...problem,
      vehicles: [{ ...vehicle, breaks: [] }],
      visits: problem.visits.map((v) => ({ ...v, timeWindows: [] })),
    };
    const order = solo.visits.map((v) => v.id).reverse();
    const warm = solveRouting(
      { ...solo, initialRoutes: [{ vehicleId: vehicle.id, visitIds: order }] },
      { maxIterations: 0, timeLimitMs: Infinity },
    );
    expect(checkSolution(solo, warm).violations).toEqual([]);
    // The local search may only shorten it.
    expect(warm.totals.distance).toBeLessThanOrEqual(sequenceDistance(solo, vehicle.id, order) + 1e-6);
  });

  it("ignores unknown vehicles and visits, and visits the vehicle may not serve", () => {
    const problem = randomProblem(7, 10);
    const initialRoutes = [
      { vehicleId: "nobody", visitIds: ["visit-0"] },
      { vehicleId: problem.vehicles[0]!.id, visitIds: ["nothing", "visit-1", "visit-1"] },
    ];
    const warm = solveRouting({ ...problem, initialRoutes }, { maxIterations: 50, timeLimitMs: Infinity });
    expect(checkSolution(problem, warm).violations).toEqual([]);
  });
});
