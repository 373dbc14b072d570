// What the search phases share: the budget (time and iterations), the best solution met so far, and
// the simulated-annealing loop over ruin-and-recreate steps.
import type { EliteExchange } from "./model.ts";
import type { Random } from "./random.ts";
import type { RuinRecreate } from "./ruin-recreate.ts";
import type { Snapshot, Solution } from "./solution.ts";

/**
 * When a search has converged (the early stop). The annealing cools over `horizon` iterations (or the
 * time budget, if that ends first); after the horizon the search goes on at the final temperature only
 * while it still pays: it is judged in windows of `patience` iterations, and stops at the end of a window
 * in which the incumbent neither served more visits nor lowered its cost by `minGain` of the instance's
 * cost scale (the first solution's distance). A window without any new best is the old stagnation rule;
 * the gain threshold is what lets real days stop, where the final temperature still finds tiny gains.
 */
export interface Convergence {
  horizon: number;
  patience: number;
  /** Gain per window, relative to the cost scale, below which the search has stopped paying. */
  minGain: number;
}

/**
 * Cooling iterations per squared visit up to `LINEAR_FROM_VISITS`, and patience per visit (with a floor): long
 * enough that a 100-visit day stops within ~5 CPU-s without leaving its gain on the table (measurements:
 * shared/routing/README.md, "Constants and their measurements").
 */
export const HORIZON_PER_SQUARED_VISIT = 20;
export const PATIENCE_PER_VISIT = 40;
export const MIN_PATIENCE = 1000;
export const MIN_HORIZON = 2000;
/** From here to `CUBIC_FROM_VISITS` the horizon grows linearly (1,000 iterations per visit: 100,000 at 100). */
export const LINEAR_FROM_VISITS = 50;
/**
 * Beyond this many visits the horizon grows cubically, so larger runs spend their budget: a linear horizon stopped
 * 300-visit days early, off their full-budget plans (README, "Constants and their measurements").
 */
export const CUBIC_FROM_VISITS = 100;
/** A window gaining less than this share of the cost scale has stopped paying. */
export const MIN_GAIN = 0.0005;

export function convergenceFor(visits: number): Convergence {
  const atCubic = HORIZON_PER_SQUARED_VISIT * LINEAR_FROM_VISITS * CUBIC_FROM_VISITS;
  const horizon =
    visits <= LINEAR_FROM_VISITS
      ? HORIZON_PER_SQUARED_VISIT * visits * visits
      : visits <= CUBIC_FROM_VISITS
        ? HORIZON_PER_SQUARED_VISIT * LINEAR_FROM_VISITS * visits
        : atCubic * (visits / CUBIC_FROM_VISITS) ** 3;
  return {
    horizon: Math.round(Math.max(MIN_HORIZON, horizon)),
    patience: Math.max(MIN_PATIENCE, PATIENCE_PER_VISIT * visits),
    minGain: MIN_GAIN,
  };
}

/**
 * The stop rule, checked at the end of each window: past the horizon, and over the last `patience`
 * iterations the incumbent served no more visits and gained less than `minGain × scale`.
 */
export function hasConverged(
  iterations: number,
  window: { start: number; droppedGain: number; costGain: number },
  convergence: Convergence,
  scale: number,
): boolean {
  return (
    iterations >= convergence.horizon &&
    iterations - window.start >= convergence.patience &&
    window.droppedGain <= 0 &&
    window.costGain < convergence.minGain * scale
  );
}

/** How a search ended: converged (early stop), its time or iteration budget spent, or stopped from outside (`deadline`). */
export type SearchEnd = "earlyStop" | "budget" | "deadline";

export class Budget {
  iterations = 0;
  /** Iteration count when the incumbent last improved. */
  lastImprovement = 0;
  /**
   * The fleet phases' schedule in iterations (`phaseProgress`): set, a seed's fleet phase does the same steps
   * however busy the machine is, and `timeCap` of the budget (its usual share) only caps it; unset, the phases
   * share the budget's time like the rest.
   */
  phaseSchedule: { iterations: number; timeCap: number } | undefined;
  /** Cost scale of the gain threshold (set once the first solution is known). */
  scale = 1;
  /** Set once `done()` has answered true. */
  endedBy: SearchEnd | undefined;
  private readonly startedAt: number;
  /** The clock when `done()` last read it: the annealing step right after reads its progress from it. */
  private checkedAt: number;
  private window = { start: 0, dropped: Infinity, cost: Infinity };
  private best = { dropped: Infinity, cost: Infinity };

  constructor(
    private readonly now: () => number,
    private readonly timeLimitMs: number,
    private readonly maxIterations: number,
    /** Early stop; none: the whole budget is spent. */
    private readonly convergence?: Convergence,
    /** Checked with the clock: true stops the search now (e.g. the caller's deadline is near). */
    private readonly mustStop?: () => boolean,
  ) {
    this.startedAt = now();
    this.checkedAt = this.startedAt;
  }

  /**
   * Share of the schedule used, from 0 to 1 (time, iterations or the convergence horizon, whichever is
   * further along). `atLastCheck`: at the time `done()` has just read (one clock read per annealing step,
   * which matters with a CPU-time clock; `done()` has asked `mustStop` too).
   */
  progress(atLastCheck = false): number {
    // Every phase (route and fleet minimisation too) ends at once when the caller must stop.
    if (this.endedBy === "deadline" || (this.endedBy === undefined && !atLastCheck && this.mustStop?.())) {
      this.endedBy = "deadline";
      return 1;
    }
    const iterationLimit = Math.min(this.maxIterations, this.convergence?.horizon ?? Infinity);
    const now = atLastCheck ? this.checkedAt : this.now();
    // A time limit already spent when the search begins (building a large instance's matrices can take longer
    // than a short budget) is all used: divided as is, a negative limit gave a negative share, and the phases
    // that run until a share of the schedule (route and fleet minimisation) ran on to their iteration horizon.
    const time = this.timeLimitMs > 0 ? (now - this.startedAt) / this.timeLimitMs : 1;
    return Math.min(1, Math.max(this.iterations / iterationLimit, time));
  }

  /**
   * The fleet phases' share of their schedule, from 0 to 1: of `phaseSchedule`'s iterations when set, with the
   * time (and the iteration limit, the deadline) as a cap — at its `timeCap` of the budget the phase ends whatever
   * its iterations, so a loaded machine can still end it early (then its steps depend on the load again); else
   * `progress()`.
   */
  phaseProgress(): number {
    const progress = this.progress();
    if (this.phaseSchedule === undefined) return progress;
    if (progress >= this.phaseSchedule.timeCap || this.endedBy === "deadline") return 1;
    return Math.min(1, this.iterations / this.phaseSchedule.iterations);
  }

  /** The time or the iteration limit is spent, the caller must stop, or the search has converged. */
  done(): boolean {
    if (this.endedBy) return true;
    this.checkedAt = this.now();
    if (this.iterations >= this.maxIterations || this.checkedAt - this.startedAt >= this.timeLimitMs) this.endedBy = "budget";
    else if (this.mustStop?.()) this.endedBy = "deadline";
    else if (this.convergence && this.windowEnded()) this.endedBy = "earlyStop";
    return this.endedBy !== undefined;
  }

  /** The incumbent improved (to `dropped`, `cost` when known). */
  improved(dropped = -Infinity, cost = -Infinity): void {
    this.lastImprovement = this.iterations;
    this.best = { dropped, cost };
  }

  /** At the end of a stagnation window: whether it stopped paying; else a new window starts. */
  private windowEnded(): boolean {
    const convergence = this.convergence!;
    if (this.iterations < convergence.horizon) return false;
    if (this.window.start < convergence.horizon) {
      this.window = { start: this.iterations, ...this.best };
      return false;
    }
    if (this.iterations - this.window.start < convergence.patience) return false;
    const window = {
      start: this.window.start,
      droppedGain: this.window.dropped - this.best.dropped,
      costGain: this.window.cost - this.best.cost,
    };
    if (this.window.dropped === Infinity) window.droppedGain = 0;
    if (this.window.cost === Infinity) window.costGain = 0;
    if (hasConverged(this.iterations, window, convergence, this.scale)) return true;
    this.window = { start: this.iterations, ...this.best };
    return false;
  }
}

/** The best solution met: least weight of unassigned visits (by priority), then lowest cost. */
export class Incumbent {
  unassigned: number;
  dropped: number;
  cost: number;
  snapshot: Snapshot;

  constructor(solution: Solution) {
    this.unassigned = solution.unassigned.size;
    this.dropped = solution.droppedWeight;
    this.cost = solution.cost;
    this.snapshot = solution.snapshot();
  }

  isImprovedBy(solution: Solution): boolean {
    return isBetter(solution.droppedWeight, solution.cost, this.dropped, this.cost);
  }

  /** Keeps the solution if it is better; returns whether it was. */
  offer(solution: Solution): boolean {
    if (!this.isImprovedBy(solution)) return false;
    this.unassigned = solution.unassigned.size;
    this.dropped = solution.droppedWeight;
    this.cost = solution.cost;
    this.snapshot = solution.snapshot();
    return true;
  }
}

export function isBetter(unassigned: number, cost: number, thanUnassigned: number, thanCost: number): boolean {
  return unassigned < thanUnassigned || (unassigned === thanUnassigned && cost < thanCost - 1e-9);
}

export interface AnnealingSchedule {
  readonly startTemperature: number;
  readonly endTemperature: number;
}

/** What a step must reach to be accepted: no more dropped weight than `dropped`, and then a cost below `cost`. */
export interface Acceptance {
  dropped: number;
  cost: number;
}

/** What `anneal` works on and with. */
export interface AnnealOptions {
  solution: Solution;
  ruinRecreate: RuinRecreate;
  budget: Budget;
  random: Random;
  incumbent: Incumbent;
  schedule: AnnealingSchedule;
  /** Runs on every new best solution. */
  polish: (solution: Solution) => void;
  /**
   * Puts the ruined (and any unassigned) visits back; default: `ruinRecreate.recreate` of every unassigned
   * visit, opening vehicles. Must leave every route feasible.
   */
  recreate?: (removed: number[], acceptance: Acceptance) => void;
  /**
   * Acceptance on penalised cost: plans may stay infeasible between steps. `penalty` is what the plan's
   * infeasibility adds to its cost (0: feasible); a step is accepted on cost + penalty, and an infeasible plan
   * that beats the incumbent on it is repaired (`repair`: leaves every route feasible) and offered to it.
   */
  penalised?: { penalty: () => number; repair: () => void };
  /** With one, the search meets the others at each new epoch and goes on from a better elite when one is handed back. */
  exchange?: EliteExchange;
  /**
   * The temperature follows this phase's steps, not the time used: it reaches the end temperature after `steps`
   * and holds it, so a seed's path does not move with the machine's load (the time budget still ends the search;
   * the solver's "horizon" switch: `horizonCoolingSteps`). Off: the temperature follows `Budget.progress` (time or
   * iterations, whichever is further).
   */
  stepSchedule?: { steps: number };
  /**
   * Runs once, at the first step when the schedule (`Budget.progress`) has reached `at`; it may change the solution
   * and spend budget, and the annealing goes on from the solution it leaves (solver.ts: the fleet phases' second chance).
   */
  midway?: { at: number; run: () => void };
}

/**
 * The "horizon" step schedule's cooling (solver.ts `STEP_SCHEDULE`): the distance phase reaches its end temperature
 * after `COOL_SHARE` of the steps the early stop's horizon leaves it (the horizon less the fleet phases' iterations),
 * and holds it afterwards. Cooling over the whole horizon (round six) left every run that a loaded machine stopped
 * before the horizon still warm at the end: most 5 CPU-s runs of a 100-visit day got 40–60 k distance steps of the
 * 80 k the horizon leaves (README, "Round six" and "Round seven").
 */
export const COOL_SHARE = 0.7;
/**
 * Steps (iterations) per CPU-second at n visits, `STEPS_PER_CPU_SECOND_AT_ONE_VISIT / √n`: measured on the shared
 * 2-core VM under load, nice 19, realistic days, seed 1, the distance phase (2026-11-28, 18:30 UTC: 14.7 k/s at 100
 * visits, 11.1 k at 200, 9.8 k at 300; the fleet phases' ~9.5 k at 300; 18–21 k at 100 in the benches after) — the
 * rate falls more slowly than 1/n, since a step ruins ~10 visits whatever the size; the formula gives 18.0, 12.7
 * and 10.4 k. A constant, not a clock reading: the cap below is fixed before the search.
 */
export const STEPS_PER_CPU_SECOND_AT_ONE_VISIT = 180_000;
/**
 * The share of the time budget by which the run, at the measured rate, is to be cold: the fleet phases' steps count
 * as spent, so the distance phase cools over `COOL_BUDGET_SHARE` of the budget's steps less theirs — at 100 visits
 * they take 10–35 k of ~90 k, at 300 visits (time-bound there) ~60 k of ~145 k in 15 CPU-s, so a share of the
 * distance phase's own budget would be too long at one size or too short at the other. Never less than
 * `COOL_FLOOR_SHARE` of the budget's steps: the fleet phases stop at half of the budget, so the distance phase gets
 * at least the other half, and a fast machine's long fleet phase does not leave it a cooling of nothing.
 */
export const COOL_BUDGET_SHARE = 0.8;
export const COOL_FLOOR_SHARE = 0.4;

/**
 * Steps over which the "horizon" schedule cools the distance phase: `COOL_SHARE` of the steps the iteration
 * schedule leaves (`scheduled` − `done`: the horizon or the iteration limit, less the fleet phases' iterations),
 * capped by the steps the measured rate at this size gives in `COOL_BUDGET_SHARE` of the time budget, less `done`
 * (at least `COOL_FLOOR_SHARE` of the budget's steps) — at 300 visits the horizon (2.7 M iterations) is far beyond
 * a 15 CPU-s budget, so uncapped the search stopped hot. Every term is fixed by the problem's size, the budget and
 * the iterations done — no clock reading — so a seed cools over the same steps however busy the machine is (only
 * the fleet phases' iterations, time-bound when they reach their cap, can move it). At 100 visits and 5 CPU-s, the
 * fleet phases having taken 17,579 steps: min(0.7 × 82,421, 72,000 − 17,579) = 54,421; at 300 visits and 15 CPU-s
 * after 58,885: 124,708 − 58,885 = 65,823.
 */
export function horizonCoolingSteps(visits: number, timeLimitMs: number, scheduled: number, done: number): number {
  const byHorizon = COOL_SHARE * (scheduled - done);
  const atRate =
    timeLimitMs > 0 && Number.isFinite(timeLimitMs)
      ? (STEPS_PER_CPU_SECOND_AT_ONE_VISIT / Math.sqrt(Math.max(1, visits))) * (timeLimitMs / 1000)
      : Infinity;
  const byBudget = Math.max(COOL_BUDGET_SHARE * atRate - done, COOL_FLOOR_SHARE * atRate);
  return Math.max(1, Math.round(Math.min(byHorizon, byBudget)));
}

/**
 * The annealing temperature after `cooled` (0 to 1, held at 1 beyond) of the schedule: geometric from the start to
 * the end temperature.
 */
export function temperatureAt(schedule: AnnealingSchedule, cooled: number): number {
  return schedule.startTemperature * (schedule.endTemperature / schedule.startTemperature) ** Math.min(1, Math.max(0, cooled));
}

/**
 * Ruin-and-recreate with simulated-annealing acceptance until the budget is spent or the search has
 * converged; the temperature falls geometrically over the remaining schedule (nothing changes for a search
 * that is never handed an elite).
 */
export function anneal(options: AnnealOptions): void {
  const { solution, ruinRecreate, budget, random, incumbent, schedule, polish, exchange } = options;
  const { recreate, penalised } = options;
  const scheduleSteps = options.stepSchedule ? Math.max(1, Math.round(options.stepSchedule.steps)) : undefined;
  let step = 0;
  const from = Math.min(budget.progress(), 0.99);
  let unassigned = solution.droppedWeight;
  let cost = solution.cost;
  // Under penalised acceptance: the current plan's penalty as of the last step (the weights move between steps).
  let penalty = 0;
  budget.improved(incumbent.dropped, incumbent.cost);
  let epoch = 0;
  const acceptance: Acceptance = { dropped: 0, cost: 0 };
  let midwayDone = false;
  while (!budget.done()) {
    if (exchange) {
      const now = exchange.epoch(budget.iterations);
      if (now > epoch) {
        epoch = now;
        const elite = exchange.sync(epoch, { dropped: incumbent.dropped, cost: incumbent.cost, snapshot: incumbent.snapshot });
        if (elite && isBetter(elite.dropped, elite.cost, incumbent.dropped, incumbent.cost)) {
          solution.restore(elite.snapshot);
          incumbent.offer(solution);
          budget.improved(incumbent.dropped, incumbent.cost);
          unassigned = solution.droppedWeight;
          cost = solution.cost;
          penalty = 0;
        }
      }
    }
    if (options.midway && !midwayDone && budget.progress(true) >= options.midway.at) {
      midwayDone = true;
      options.midway.run();
      if (budget.done()) break;
      unassigned = solution.droppedWeight;
      cost = solution.cost;
      penalty = 0;
    }
    if (penalised && penalty > 0) {
      cost -= penalty;
      penalty = penalised.penalty();
      cost += penalty;
    }
    const cooled = scheduleSteps !== undefined ? Math.min(1, step / scheduleSteps) : Math.max(0, budget.progress(true) - from) / (1 - from);
    const temperature = temperatureAt(schedule, cooled);
    const drawThreshold = () => cost - temperature * Math.log(random.next());
    solution.begin();
    let threshold: number;
    if (recreate) {
      // Drawn before the recreate, so that it may spend more effort on near-accepted steps.
      threshold = drawThreshold();
      acceptance.dropped = unassigned;
      acceptance.cost = threshold;
      recreate(ruinRecreate.ruin(), acceptance);
    } else {
      ruinRecreate.ruin();
      ruinRecreate.recreate([...solution.unassigned], true);
      threshold = drawThreshold();
    }
    budget.iterations++;
    const newPenalty = penalised ? penalised.penalty() : 0;
    const newCost = solution.cost + newPenalty;
    if (isBetter(solution.droppedWeight, newCost, unassigned, threshold)) {
      solution.commit();
      penalty = newPenalty;
      if (newPenalty > 0) {
        // Infeasible: repaired only when it beats the best on penalised cost; kept repaired if that is a new best.
        if (isBetter(solution.droppedWeight, newCost, incumbent.dropped, incumbent.cost)) {
          solution.begin();
          penalised!.repair();
          if (incumbent.isImprovedBy(solution)) {
            solution.commit();
            polish(solution);
            incumbent.offer(solution);
            budget.improved(incumbent.dropped, incumbent.cost);
            penalty = 0;
          } else solution.rollback();
        }
      } else if (incumbent.isImprovedBy(solution)) {
        polish(solution);
        incumbent.offer(solution);
        budget.improved(incumbent.dropped, incumbent.cost);
      }
      unassigned = solution.droppedWeight;
      cost = solution.cost + penalty;
    } else {
      solution.rollback();
    }
    step++;
  }
}
