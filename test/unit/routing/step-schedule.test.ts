import { describe, expect, it } from "vitest";
import {
  Budget,
  COOL_BUDGET_SHARE,
  COOL_FLOOR_SHARE,
  COOL_SHARE,
  convergenceFor,
  horizonCoolingSteps,
  STEPS_PER_CPU_SECOND_AT_ONE_VISIT,
  temperatureAt,
} from "#shared/routing/search";
import { annealRandomPlan, expectFeasibleWithEveryVisitOnce } from "./random-problem.ts";

/**
 * A clock read once per step: `msAt(reading)` is its time at the n-th reading. The thresholds the steps were held
 * to (drawn from the temperature), the best plan and the steps taken.
 */
function run(stepSchedule: { steps: number } | undefined, msAt: (reading: number) => number, timeLimitMs: number, maxIterations: number) {
  let readings = 0;
  const budget = new Budget(() => msAt(++readings), timeLimitMs, maxIterations);
  const thresholds: number[] = [];
  const { solution, incumbent } = annealRandomPlan(4, budget, stepSchedule ? { stepSchedule } : {}, (acceptance) =>
    thresholds.push(acceptance.cost),
  );
  return { solution, plan: incumbent, thresholds, iterations: budget.iterations };
}

describe("the distance phase's temperature on a schedule of steps (AnnealOptions.stepSchedule)", () => {
  // A steady clock, and one the machine's load stalls for 12 ms at its 100th reading.
  const steady = (reading: number) => reading * 0.01;
  const stalled = (reading: number) => reading * 0.01 + (reading >= 100 ? 12 : 0);

  it("under an iteration limit takes the same steps and plan however the clock runs, where the time schedule does not", () => {
    // 400 steps; the 20 ms budget is never spent (4 ms steady, 16 ms stalled), but the stall puts the stalled
    // clock's time further along than its steps, which cools the time schedule early.
    const fast = run({ steps: 400 }, steady, 20, 400);
    const slow = run({ steps: 400 }, stalled, 20, 400);
    expect(fast.iterations).toBe(400);
    expect(slow).toEqual(fast);
    expectFeasibleWithEveryVisitOnce(fast.solution);
    const byTimeFast = run(undefined, steady, 20, 400);
    const byTimeSlow = run(undefined, stalled, 20, 400);
    expect(byTimeSlow.iterations).toBe(400);
    expect(byTimeSlow.thresholds).not.toEqual(byTimeFast.thresholds);
  }, 60_000);

  it("is deterministic for a seed and an iteration limit, and cools to the end temperature by the limit", () => {
    const a = run({ steps: 300 }, steady, 1_000, 300);
    const b = run({ steps: 300 }, () => 0, Infinity, 300);
    expect(b).toEqual(a);
    // Against the time schedule on a clock that never moves (it cools by steps alone): the same path.
    expect(run(undefined, () => 0, Infinity, 300)).toEqual(a);
  }, 60_000);

  it("on a length the caller gives, cools over it whatever the clock, and the time budget only cuts it short", () => {
    // 600 steps given; the 4 ms budget ends the steady clock after ~400 readings, the stalled one at its stall (~100).
    const fast = run({ steps: 600 }, steady, 4, Infinity);
    const slow = run({ steps: 600 }, stalled, 4, Infinity);
    expect(slow.iterations).toBeLessThan(fast.iterations);
    expect(slow.thresholds).toEqual(fast.thresholds.slice(0, slow.thresholds.length));
    expectFeasibleWithEveryVisitOnce(slow.solution);
  }, 60_000);
});

describe("the horizon schedule's cooling length (horizonCoolingSteps): a share of the horizon, capped from the budget", () => {
  const schedule = { startTemperature: 20, endTemperature: 0.2 };

  it("cools over a share of the steps the horizon leaves, when the budget does not cap it", () => {
    // 100 visits, no time budget (an iteration-only run): 0.7 of the horizon less the fleet phases' 20,000 steps.
    const horizon = convergenceFor(100).horizon;
    expect(horizon).toBe(100_000);
    expect(horizonCoolingSteps(100, Infinity, horizon, 20_000)).toBe(Math.round(COOL_SHARE * 80_000));
    expect(COOL_SHARE).toBeGreaterThanOrEqual(0.6);
    expect(COOL_SHARE).toBeLessThanOrEqual(0.8);
    // An iteration limit below the horizon is the schedule then.
    expect(horizonCoolingSteps(100, Infinity, 10_000, 0)).toBe(7_000);
    // Never below one step, even when the fleet phases used the whole schedule.
    expect(horizonCoolingSteps(100, Infinity, 10_000, 12_000)).toBe(1);
  });

  it("is capped per size from the budget, so that a 300-visit day reaches the cold end within 15 CPU-s", () => {
    const horizon = convergenceFor(300).horizon;
    expect(horizon).toBe(2_700_000);
    const rate = STEPS_PER_CPU_SECOND_AT_ONE_VISIT / Math.sqrt(300);
    // The steps the measured rate gives in 0.8 of the budget, less the fleet phases' (60,000 here).
    const steps = horizonCoolingSteps(300, 15_000, horizon, 60_000);
    expect(steps).toBe(Math.round(rate * 15 * COOL_BUDGET_SHARE - 60_000));
    // Far below the horizon's share, and within what ~10,000 steps per CPU-second give in the half of the budget
    // the fleet phases leave the distance phase at least (7.5 CPU-s).
    expect(steps).toBeLessThan(COOL_SHARE * (horizon - 60_000));
    expect(steps).toBeLessThan(10_000 * 7.5);
    // A fleet phase that took most of the budget's steps (a fast machine) still leaves the floor's share.
    expect(horizonCoolingSteps(300, 15_000, horizon, 120_000)).toBe(Math.round(rate * 15 * COOL_FLOOR_SHARE));
    // At 100 visits and 5 CPU-s the cap binds too, below the horizon's share.
    expect(horizonCoolingSteps(100, 5_000, 100_000, 17_579)).toBe(72_000 - 17_579);
    expect(horizonCoolingSteps(100, 5_000, 100_000, 17_579)).toBeLessThan(COOL_SHARE * (100_000 - 17_579));
    // With a 10 s budget (the API's default) the horizon's share binds at 100 visits.
    expect(horizonCoolingSteps(100, 10_000, 100_000, 17_579)).toBe(Math.round(COOL_SHARE * (100_000 - 17_579)));
    // The same length for the same size, budget and iterations: no clock is read.
    expect(horizonCoolingSteps(300, 15_000, horizon, 60_000)).toBe(steps);
  });

  it("reaches the end temperature at the length and holds it afterwards", () => {
    expect(temperatureAt(schedule, 0)).toBe(20);
    expect(temperatureAt(schedule, 0.5)).toBeCloseTo(2, 10);
    expect(temperatureAt(schedule, 1)).toBeCloseTo(0.2, 12);
    expect(temperatureAt(schedule, 1.7)).toBe(temperatureAt(schedule, 1));
  });

  it("under an iteration limit takes the same steps and plan whatever the clock, cold over the steps after the share", () => {
    // 500 iterations, cooling over 0.7 of them: the last 150 steps at the end temperature.
    const steps = horizonCoolingSteps(4, Infinity, 500, 0);
    expect(steps).toBe(350);
    const steady = (reading: number) => reading * 0.01;
    const stalled = (reading: number) => reading * 0.01 + (reading >= 100 ? 12 : 0);
    const fast = run({ steps }, steady, 20, 500);
    const slow = run({ steps }, stalled, 20, 500);
    expect(fast.iterations).toBe(500);
    expect(slow).toEqual(fast);
    expectFeasibleWithEveryVisitOnce(fast.solution);
    // Not the schedule over the whole limit: the paths part once the shorter one is colder.
    const whole = run({ steps: 500 }, steady, 20, 500);
    expect(whole.thresholds).not.toEqual(fast.thresholds);
  }, 60_000);
});
