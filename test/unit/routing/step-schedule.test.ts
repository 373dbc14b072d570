import { describe, expect, it } from "vitest";
import { Budget, WARM_UP_STEPS } from "#shared/routing/search";
import { annealRandomPlan, expectFeasibleWithEveryVisitOnce } from "./random-problem.ts";

/**
 * A clock read once per step: `msAt(reading)` is its time at the n-th reading. The thresholds the steps were held
 * to (drawn from the temperature), the best plan and the steps taken.
 */
function run(stepSchedule: boolean | { steps: number }, msAt: (reading: number) => number, timeLimitMs: number, maxIterations: number) {
  let readings = 0;
  const budget = new Budget(() => msAt(++readings), timeLimitMs, maxIterations);
  const thresholds: number[] = [];
  const { solution, incumbent } = annealRandomPlan(4, budget, { stepSchedule }, (acceptance) => thresholds.push(acceptance.cost));
  return { solution, plan: incumbent, thresholds, iterations: budget.iterations };
}

describe("the distance phase's temperature on a schedule of steps (AnnealOptions.stepSchedule)", () => {
  // A steady clock, and one the machine's load stalls for 12 ms at its 100th reading.
  const steady = (reading: number) => reading * 0.01;
  const stalled = (reading: number) => reading * 0.01 + (reading >= 100 ? 12 : 0);

  it("under an iteration limit takes the same steps and plan however the clock runs, where the time schedule does not", () => {
    // 400 steps; the 20 ms budget is never spent (4 ms steady, 16 ms stalled), but the stall puts the stalled
    // clock's time further along than its steps, which cools the time schedule early.
    const fast = run(true, steady, 20, 400);
    const slow = run(true, stalled, 20, 400);
    expect(fast.iterations).toBe(400);
    expect(slow).toEqual(fast);
    expectFeasibleWithEveryVisitOnce(fast.solution);
    const byTimeFast = run(false, steady, 20, 400);
    const byTimeSlow = run(false, stalled, 20, 400);
    expect(byTimeSlow.iterations).toBe(400);
    expect(byTimeSlow.thresholds).not.toEqual(byTimeFast.thresholds);
  }, 60_000);

  it("is deterministic for a seed and an iteration limit, and cools to the end temperature by the limit", () => {
    const a = run(true, steady, 1_000, 300);
    const b = run(true, () => 0, Infinity, 300);
    expect(b).toEqual(a);
    // Against the time schedule on a clock that never moves (it cools by steps alone): the same path.
    expect(run(false, () => 0, Infinity, 300)).toEqual(a);
  }, 60_000);

  it("under a time budget alone fixes its length after the warm-up: a slower machine afterwards only cuts the same path short", () => {
    // A budget of 30 ms at 0.01 ms per reading: ~3,000 steps; the second clock runs 3× slower from reading 1,200
    // (after the warm-up's 1,000 steps have given the rate), so its budget ends after fewer steps.
    const slowedLater = (reading: number) => (reading < 1_200 ? reading * 0.01 : 12 + (reading - 1_200) * 0.03);
    const fast = run(true, steady, 30, Infinity);
    const slow = run(true, slowedLater, 30, Infinity);
    expect(fast.iterations).toBeGreaterThan(2 * WARM_UP_STEPS);
    expect(slow.iterations).toBeLessThan(fast.iterations);
    expect(slow.thresholds).toEqual(fast.thresholds.slice(0, slow.thresholds.length));
    // On the time schedule the slowdown cools the rest of the run faster: the paths part.
    const byTimeFast = run(false, steady, 30, Infinity);
    const byTimeSlow = run(false, slowedLater, 30, Infinity);
    expect(byTimeSlow.thresholds).not.toEqual(byTimeFast.thresholds.slice(0, byTimeSlow.thresholds.length));
    expectFeasibleWithEveryVisitOnce(slow.solution);
  }, 60_000);

  it("on a length the caller gives, cools over it whatever the clock, and the time budget only cuts it short", () => {
    // 600 steps given; the 4 ms budget ends the steady clock after ~400 readings, the stalled one at its stall (~100).
    const fast = run({ steps: 600 }, steady, 4, Infinity);
    const slow = run({ steps: 600 }, stalled, 4, Infinity);
    expect(slow.iterations).toBeLessThan(fast.iterations);
    expect(slow.thresholds).toEqual(fast.thresholds.slice(0, slow.thresholds.length));
    // Under an iteration limit of 600 the same temperatures as the schedule of the limit itself.
    expect(run({ steps: 600 }, () => 0, Infinity, 600)).toEqual(run(true, () => 0, Infinity, 600));
    expectFeasibleWithEveryVisitOnce(slow.solution);
  }, 60_000);
});
