import { describe, expect, it } from "vitest";
import { buildInstance } from "#shared/routing/instance";
import { Random } from "#shared/routing/random";
import { RuinRecreate } from "#shared/routing/ruin-recreate";
import { anneal, Budget, Incumbent, LateAcceptance } from "#shared/routing/search";
import { Solution } from "#shared/routing/solution";
import { expectFeasibleWithEveryVisitOnce, randomFeasibleRoutes, randomProblem } from "./random-problem.ts";

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

describe("anneal with late acceptance", () => {
  /** `iterations` steps from a random feasible plan; the thresholds the steps were held to, the best and last plans. */
  function run(seed: number, length: number, iterations: number) {
    const solution = new Solution(buildInstance(randomProblem(seed, 18)), { vehicle: 1000, underload: 7 });
    const random = new Random(seed);
    randomFeasibleRoutes(solution, random);
    const ruinRecreate = new RuinRecreate(solution, random);
    const incumbent = new Incumbent(solution);
    const budget = new Budget(() => 0, Infinity, iterations);
    const steps: { threshold: number; dropped: number; fleet: number }[] = [];
    anneal({
      solution,
      ruinRecreate,
      budget,
      random,
      incumbent,
      schedule: { startTemperature: 20, endTemperature: 0.2 },
      polish: () => {},
      lateAcceptance: length,
      recreate: (_removed, acceptance) => {
        steps.push({ threshold: acceptance.cost, dropped: acceptance.dropped, fleet: solution.fixedCostUsed });
        ruinRecreate.recreate([...solution.unassigned], true);
      },
    });
    const current = solution.snapshot();
    solution.restore(incumbent.snapshot);
    return { solution, incumbent: incumbent.snapshot, current, steps, iterations: budget.iterations };
  }

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
