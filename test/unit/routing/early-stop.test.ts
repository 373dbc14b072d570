import { describe, expect, it } from "vitest";
import { Budget, convergenceFor, hasConverged, MIN_HORIZON, MIN_PATIENCE } from "#shared/routing/search";
import { solveRouting } from "#shared/routing/solver";
import { checkSolution } from "#shared/routing/check";
import { randomProblem } from "./random-problem.ts";

describe("early stop rule", () => {
  it("grows the cooling horizon quadratically (cubically beyond 50 visits) and the patience linearly with the visits, with floors", () => {
    expect(convergenceFor(0)).toEqual({ horizon: MIN_HORIZON, patience: MIN_PATIENCE });
    expect(convergenceFor(25)).toEqual({ horizon: 6250, patience: 1000 });
    expect(convergenceFor(50)).toEqual({ horizon: 25_000, patience: 2000 });
    expect(convergenceFor(100)).toEqual({ horizon: 200_000, patience: 4000 }); // cubic beyond 50 visits
    expect(convergenceFor(1000).horizon).toBe(200_000_000);
  });

  it("stops only past the horizon and after `patience` iterations without a new best", () => {
    const limits = { horizon: 1000, patience: 200 };
    expect(hasConverged(999, 0, limits)).toBe(false); // still cooling
    expect(hasConverged(1000, 850, limits)).toBe(false); // improved 150 iterations ago
    expect(hasConverged(1050, 850, limits)).toBe(true);
    expect(hasConverged(5000, 4900, limits)).toBe(false); // still improving after the horizon
  });

  it("budget: the schedule runs over the horizon; done on convergence, time or iterations", () => {
    let clock = 0;
    const budget = new Budget(() => clock, 10_000, Infinity, { horizon: 100, patience: 10 });
    budget.iterations = 50;
    expect(budget.progress()).toBe(0.5);
    expect(budget.done()).toBe(false);
    budget.iterations = 100;
    budget.improved();
    budget.iterations = 109;
    expect(budget.done()).toBe(false);
    budget.iterations = 110;
    expect(budget.done()).toBe(true);

    const timed = new Budget(() => clock, 1000, Infinity);
    timed.iterations = 1e9;
    expect(timed.done()).toBe(false); // without early stop only time or iterations end it
    clock = 1000;
    expect(timed.done()).toBe(true);
    expect(new Budget(() => 0, Infinity, 5).progress()).toBe(0);
  });

  it("a solve with a clock that never moves ends by convergence, feasible; without early stop it runs to the iteration limit", () => {
    const problem = randomProblem(3, 12);
    const frozen = () => 0;
    const early = solveRouting(problem, { seed: 1, timeLimitMs: 60_000, now: frozen, objective: "distance" });
    const { horizon } = convergenceFor(12);
    expect(early.iterations).toBeGreaterThanOrEqual(horizon);
    expect(early.iterations).toBeLessThan(horizon + 50_000);
    expect(checkSolution(problem, early).violations).toEqual([]);
    const full = solveRouting(problem, { seed: 1, timeLimitMs: 60_000, now: frozen, objective: "distance", earlyStop: false, maxIterations: 3 * horizon });
    expect(full.iterations).toBe(3 * horizon);
    expect(full.totals.visits).toBe(early.totals.visits);
  }, 60_000);
});
