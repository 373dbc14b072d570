import { describe, expect, it } from "vitest";
import { Budget, convergenceFor, hasConverged, MIN_GAIN, MIN_HORIZON, MIN_PATIENCE } from "#shared/routing/search";
import { solveRouting } from "#shared/routing/solver";
import { checkSolution } from "#shared/routing/check";
import { randomProblem } from "./random-problem.ts";

describe("early stop rule", () => {
  it("grows the cooling horizon quadratically to 50 visits, linearly to 100, cubically beyond; the patience linearly; floors", () => {
    expect(convergenceFor(0)).toEqual({ horizon: MIN_HORIZON, patience: MIN_PATIENCE, minGain: MIN_GAIN });
    expect(convergenceFor(25)).toEqual({ horizon: 12_500, patience: 1000, minGain: MIN_GAIN });
    expect(convergenceFor(50)).toEqual({ horizon: 50_000, patience: 2000, minGain: MIN_GAIN });
    expect(convergenceFor(75).horizon).toBe(75_000);
    expect(convergenceFor(100)).toEqual({ horizon: 100_000, patience: 4000, minGain: MIN_GAIN }); // 1,000 per visit beyond 50
    expect(convergenceFor(300)).toEqual({ horizon: 100_000 * 27, patience: 12_000, minGain: MIN_GAIN }); // cubic beyond 100: larger runs spend their budget
  });

  it("stops only past the horizon, at the end of a window that served no more visits and gained less than minGain × scale", () => {
    const limits = { horizon: 1000, patience: 200, minGain: 0.001 };
    const still = { droppedGain: 0, costGain: 0 };
    expect(hasConverged(999, { start: 0, ...still }, limits, 1000)).toBe(false); // still cooling
    expect(hasConverged(1150, { start: 1000, ...still }, limits, 1000)).toBe(false); // window not over
    expect(hasConverged(1200, { start: 1000, ...still }, limits, 1000)).toBe(true);
    expect(hasConverged(1200, { start: 1000, droppedGain: 0, costGain: 0.99 }, limits, 1000)).toBe(true); // gained < 0.1 %
    expect(hasConverged(1200, { start: 1000, droppedGain: 0, costGain: 1 }, limits, 1000)).toBe(false); // still paying
    expect(hasConverged(1200, { start: 1000, droppedGain: 1, costGain: -5 }, limits, 1000)).toBe(false); // served more visits
  });

  it("budget: the schedule runs over the horizon; done on convergence (window by window), time, iterations or mustStop, and says which", () => {
    let clock = 0;
    const budget = new Budget(() => clock, 10_000, Infinity, { horizon: 100, patience: 10, minGain: 0.01 });
    budget.scale = 1000;
    budget.improved(0, 500);
    budget.iterations = 50;
    expect(budget.progress()).toBe(0.5);
    expect(budget.done()).toBe(false);
    budget.iterations = 100;
    expect(budget.done()).toBe(false); // the first window starts here
    budget.iterations = 105;
    budget.improved(0, 480); // gains 20 ≥ 1 % of 1000
    budget.iterations = 110;
    expect(budget.done()).toBe(false); // that window paid: a new one starts
    budget.iterations = 115;
    budget.improved(0, 475); // gains 5 < 10
    budget.iterations = 120;
    expect(budget.done()).toBe(true);
    expect(budget.endedBy).toBe("earlyStop");

    const timed = new Budget(() => clock, 1000, Infinity);
    timed.iterations = 1e9;
    expect(timed.done()).toBe(false); // without early stop only time or iterations end it
    clock = 1000;
    expect(timed.done()).toBe(true);
    expect(timed.endedBy).toBe("budget");
    expect(new Budget(() => 0, Infinity, 5).progress()).toBe(0);

    let stop = false;
    const guarded = new Budget(
      () => 0,
      Infinity,
      Infinity,
      undefined,
      () => stop,
    );
    expect(guarded.done()).toBe(false);
    expect(guarded.progress()).toBe(0);
    stop = true;
    expect(guarded.progress()).toBe(1); // route and fleet minimisation, which watch the progress, end too
    expect(guarded.done()).toBe(true);
    expect(guarded.endedBy).toBe("deadline");
  });

  it("a solve with a clock that never moves ends by convergence, feasible; without early stop it runs to the iteration limit", () => {
    const problem = randomProblem(3, 12);
    const frozen = () => 0;
    const early = solveRouting(problem, { seed: 1, timeLimitMs: 60_000, now: frozen, objective: "distance" });
    const { horizon } = convergenceFor(12);
    expect(early.iterations).toBeGreaterThanOrEqual(horizon);
    expect(early.iterations).toBeLessThan(horizon + 50_000);
    expect(early.endedBy).toBe("earlyStop");
    expect(checkSolution(problem, early).violations).toEqual([]);
    const full = solveRouting(problem, {
      seed: 1,
      timeLimitMs: 60_000,
      now: frozen,
      objective: "distance",
      earlyStop: false,
      maxIterations: 3 * horizon,
    });
    expect(full.iterations).toBe(3 * horizon);
    expect(full.endedBy).toBe("budget");
    expect(full.totals.visits).toBe(early.totals.visits);
  }, 60_000);

  it("mustStop during fleet minimisation (hierarchical objective) ends that phase and the search", () => {
    const problem = randomProblem(5, 40);
    let checks = 0;
    const stopped = solveRouting(problem, {
      seed: 1,
      timeLimitMs: 60_000,
      objective: "hierarchical",
      earlyStop: false,
      mustStop: () => ++checks > 50,
    });
    expect(stopped.endedBy).toBe("deadline");
    expect(stopped.iterations).toBeLessThanOrEqual(50);
    expect(checkSolution(problem, stopped).violations).toEqual([]);
  });

  it("a time limit spent before the search begins (instance building took longer) is all used: no phase runs on", () => {
    let clock = 2000;
    const spent = new Budget(() => clock, -1000, Infinity, convergenceFor(1500));
    expect(spent.progress()).toBe(1); // a negative limit gave a negative share: the fleet phases ran to their horizon
    expect(spent.done()).toBe(true);
    expect(spent.endedBy).toBe("budget");
    const exact = new Budget(() => clock, 0, Infinity);
    clock = 2500;
    expect(exact.progress()).toBe(1);

    // The solver's clock: 0 when it starts, 2,000 ms once the instance is built, against a 1,000 ms limit. The
    // hierarchical objective's fleet phase ran ~half its iteration horizon here before the fix.
    const problem = randomProblem(5, 40);
    let calls = 0;
    const late = solveRouting(problem, {
      seed: 1,
      timeLimitMs: 1000,
      objective: "hierarchical",
      now: () => (calls++ === 0 ? 0 : 2000 + calls),
    });
    expect(late.iterations).toBe(0);
    expect(late.endedBy).toBe("budget");
    expect(late.totals.visits).toBeGreaterThan(0);
    expect(checkSolution(problem, late).violations).toEqual([]);
  });

  it("mustStop (a caller's deadline) ends the search with its best plan so far, feasible, and says so", () => {
    const problem = randomProblem(3, 30);
    let checks = 0;
    const stopped = solveRouting(problem, {
      seed: 1,
      timeLimitMs: 60_000,
      objective: "distance",
      earlyStop: false,
      mustStop: () => ++checks > 500,
    });
    expect(stopped.endedBy).toBe("deadline");
    expect(stopped.iterations).toBeLessThanOrEqual(500);
    expect(stopped.totals.visits).toBeGreaterThan(0);
    expect(checkSolution(problem, stopped).violations).toEqual([]);
  });
});
