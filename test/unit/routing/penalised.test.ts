import { describe, expect, it } from "vitest";
import { checkSolution } from "#shared/routing/check";
import { buildInstance } from "#shared/routing/instance";
import { Penalties, PenalisedStep } from "#shared/routing/penalised";
import { Random } from "#shared/routing/random";
import { RuinRecreate } from "#shared/routing/ruin-recreate";
import { Solution } from "#shared/routing/solution";
import { solveRouting } from "#shared/routing/solver";
import { randomFeasibleRoutes, randomProblem, referenceRoute } from "./random-problem.ts";

/** The default solver (the step is off) on the same problem: 0 violations. */
function checkSolutionOf(seed: number): string[] {
  const problem = randomProblem(seed, 18);
  return checkSolution(problem, solveRouting(problem, { seed, maxIterations: 200, timeLimitMs: 60_000, earlyStop: false })).violations;
}

describe("the penalised ruin-and-recreate step", () => {
  it("leaves every route feasible (by an independent replay) and every visit routed once or left out, over many steps", () => {
    let infeasible = 0;
    for (let seed = 1; seed <= 8; seed++) {
      // Two interchangeable vehicles with two breaks and a third of another class (random-problem.ts): 2-opt* across
      // classes and breaks is in play. Small penalties make most steps pass through infeasible plans.
      const solution = new Solution(buildInstance(randomProblem(seed, 18)), { vehicle: 1000, underload: 7 });
      const random = new Random(seed);
      randomFeasibleRoutes(solution, random);
      const ruinRecreate = new RuinRecreate(solution, random);
      const step = new PenalisedStep(solution, new Penalties(0.5, 5), random);
      let infeasibleSteps = 0;
      for (let i = 0; i < 40; i++) {
        solution.begin();
        ruinRecreate.ruin();
        if (!step.insertAndImprove(ruinRecreate.order([...solution.unassigned])).feasible) infeasibleSteps++;
        ruinRecreate.recreate([...solution.unassigned], true);
        for (const route of solution.routes) expect(referenceRoute(solution, route, route.nodes).feasible).toBe(true);
        const routed = solution.routes.flatMap((route) => route.nodes.filter((node) => node < solution.instance.visitCount));
        expect(new Set(routed).size).toBe(routed.length);
        expect(routed.length + solution.unassigned.size).toBe(solution.instance.routable.length);
        if (i % 2) solution.commit();
        else solution.rollback();
      }
      infeasible += infeasibleSteps;
    }
    // The point of the penalties: steps do pass through infeasible plans (and are repaired).
    expect(infeasible).toBeGreaterThan(0);
  }, 120_000);

  it("passes through infeasible plans when the penalties are low, and the penalties rise when too few steps end feasible", () => {
    const penalties = new Penalties(1, 1);
    const start = penalties.timeWarp;
    for (let i = 0; i < 100; i++) penalties.register(false);
    expect(penalties.timeWarp).toBeGreaterThan(start);
    const raised = penalties.timeWarp;
    for (let i = 0; i < 100; i++) penalties.register(true);
    expect(penalties.timeWarp).toBeLessThan(raised);
  });

  it("is deterministic for a seed and a number of steps", () => {
    const run = (seed: number) => {
      const solution = new Solution(buildInstance(randomProblem(seed, 18)), { vehicle: 1000, underload: 7 });
      const random = new Random(seed);
      randomFeasibleRoutes(solution, random);
      const ruinRecreate = new RuinRecreate(solution, random);
      const step = new PenalisedStep(solution, new Penalties(0.5, 5), random);
      for (let i = 0; i < 30; i++) {
        solution.begin();
        const removed = ruinRecreate.ruin();
        ruinRecreate.recreate([...solution.unassigned], true);
        step.insertAndImprove(ruinRecreate.order([...solution.unassigned]), removed);
        ruinRecreate.recreate([...solution.unassigned], true);
        solution.commit();
      }
      return solution.snapshot();
    };
    expect(run(5)).toEqual(run(5));
    expect(checkSolutionOf(5)).toEqual([]);
  }, 120_000);
});
