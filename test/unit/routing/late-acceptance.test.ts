import { afterEach, describe, expect, it, vi } from "vitest";
import { Budget, convergenceFor, LateAcceptance, lateAcceptanceLength, WARM_UP_STEPS } from "#shared/routing/search";
import { annealRandomPlan, expectFeasibleWithEveryVisitOnce } from "./random-problem.ts";

describe("the late-acceptance rule (LateAcceptance)", () => {
  it("lets a step cost as much as the current plan did L steps ago, or as the current plan", () => {
    const late = new LateAcceptance(3);
    // A new served weight or fleet: every entry is the current cost.
    expect(late.threshold(0, 0, 5, 100)).toBe(100);
    late.record(0, 90);
    expect(late.threshold(1, 0, 5, 90)).toBe(100);
    late.record(1, 80);
    expect(late.threshold(2, 0, 5, 80)).toBe(100);
    late.record(2, 80);
    // Step 3 reads step 0's slot (90), step 4 step 1's (80): the current plan when it is higher.
    expect(late.threshold(3, 0, 5, 70)).toBe(90);
    late.record(3, 70);
    expect(late.threshold(4, 0, 5, 85)).toBe(85);
  });

  it("starts its history again when the current plan's fleet or served weight changes", () => {
    const late = new LateAcceptance(4);
    late.threshold(0, 0, 6, 2_000);
    late.record(0, 2_000);
    // A vehicle came out (fleet 6 → 5): the entries from the larger fleet must not let one back in.
    expect(late.threshold(1, 0, 5, 1_000)).toBe(1_000);
    late.record(1, 1_000);
    expect(late.threshold(2, 0, 5, 1_000)).toBe(1_000);
    expect(late.threshold(3, 1, 5, 1_100)).toBe(1_100);
  });
});

/** `iterations` steps from a random feasible plan; the thresholds the steps were held to, the best and last plans. */
function run(seed: number, length: number | { share: number }, iterations: number, budgetFor?: () => Budget) {
  const budget = budgetFor ? budgetFor() : new Budget(() => 0, Infinity, iterations);
  const steps: { threshold: number; dropped: number; fleet: number }[] = [];
  const planned = annealRandomPlan(seed, budget, { lateAcceptance: length }, (acceptance, solution) =>
    steps.push({ threshold: acceptance.cost, dropped: acceptance.dropped, fleet: solution.fixedCostUsed }),
  );
  return { ...planned, steps, iterations: budget.iterations };
}

describe("anneal with late acceptance", () => {
  it("with a history of one step is a descent: the threshold never rises while the served weight stays", () => {
    for (let seed = 1; seed <= 4; seed++) {
      const { steps } = run(seed, 1, 200);
      expect(steps).toHaveLength(200);
      for (let i = 1; i < steps.length; i++) {
        if (steps[i]!.dropped === steps[i - 1]!.dropped) expect(steps[i]!.threshold).toBeLessThanOrEqual(steps[i - 1]!.threshold);
      }
    }
  }, 60_000);

  it("with a longer history accepts worse plans (the threshold rises at times), and the best it answers is feasible", () => {
    let rises = 0;
    for (let seed = 1; seed <= 4; seed++) {
      const { solution, steps, iterations } = run(seed, 30, 300);
      expect(iterations).toBe(300);
      for (let i = 1; i < steps.length; i++) if (steps[i]!.threshold > steps[i - 1]!.threshold + 1e-6) rises++;
      expectFeasibleWithEveryVisitOnce(solution);
    }
    expect(rises).toBeGreaterThan(0);
  }, 60_000);

  it("is deterministic for a seed and an iteration limit", () => {
    const a = run(7, 50, 250);
    const b = run(7, 50, 250);
    expect(a.incumbent).toEqual(b.incumbent);
    expect(a.current).toEqual(b.current);
    expect(a.steps).toEqual(b.steps);
  }, 60_000);
});

describe("late acceptance with a history sized from the budget", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("takes a share of the scheduled iterations left: the limit, or the early stop's horizon when lower", () => {
    expect(lateAcceptanceLength(0.15, 100_000)).toBe(15_000);
    expect(lateAcceptanceLength(0.05, 3)).toBe(1);
    const limited = new Budget(() => 0, Infinity, 300);
    limited.iterations = 100;
    expect(limited.scheduledIterationsLeft()).toBe(200);
    const horizon = convergenceFor(100).horizon;
    expect(new Budget(() => 0, Infinity, Infinity, convergenceFor(100)).scheduledIterationsLeft()).toBe(horizon);
    expect(new Budget(() => 0, 5_000, Infinity).scheduledIterationsLeft()).toBeUndefined();
  });

  it("under an iteration limit is sized at once from it, and is deterministic for a seed and the limit", () => {
    const resize = vi.spyOn(LateAcceptance.prototype, "resize");
    const a = run(5, { share: 0.1 }, 300);
    expect(resize).not.toHaveBeenCalled();
    const b = run(5, { share: 0.1 }, 300);
    expect(a.iterations).toBe(300);
    expect(a.incumbent).toEqual(b.incumbent);
    expect(a.steps).toEqual(b.steps);
    expectFeasibleWithEveryVisitOnce(a.solution);
    // The same steps as a fixed history of a tenth of the limit: the share is of the 300 steps the phase gets.
    expect(run(5, 30, 300).steps).toEqual(a.steps);
  }, 60_000);

  it("under a time budget alone measures the rate over the first steps, then sizes the history from the time left", () => {
    const resize = vi.spyOn(LateAcceptance.prototype, "resize");
    // A clock that advances 0.01 ms per reading: a budget of 40 ms is about 4,000 readings, about one per step.
    let readings = 0;
    const { solution, iterations } = run(3, { share: 0.2 }, Infinity, () => new Budget(() => ++readings * 0.01, 40, Infinity));
    expect(iterations).toBeGreaterThan(WARM_UP_STEPS);
    expect(resize).toHaveBeenCalledTimes(1);
    // A share of the steps the phase got in all (the estimate, from the rate of the first steps, is close to them).
    const length = resize.mock.calls[0]![0];
    expect(length).toBeGreaterThan(0.15 * iterations);
    expect(length).toBeLessThan(0.25 * iterations);
    expectFeasibleWithEveryVisitOnce(solution);
  }, 60_000);
});
