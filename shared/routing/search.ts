// What the search phases share: the budget (time and iterations), the best solution met so far, and
// the simulated-annealing loop over ruin-and-recreate steps.
import type { EliteExchange } from "./model.ts";
import type { Random } from "./random.ts";
import type { RuinRecreate } from "./ruin-recreate.ts";
import type { Snapshot, Solution } from "./solution.ts";

/**
 * When a search has converged (the early stop). The annealing cools over `horizon` iterations (or the
 * time budget, if that ends first); after the horizon the search goes on at the final temperature only
 * while it still improves: it stops once `patience` iterations have passed without a new best solution.
 * Both grow with the number of visits, the horizon quadratically up to 50 visits and cubically beyond
 * (small instances converge in a few thousand steps; from ~150 visits on the time budget ends first), the
 * patience linearly.
 */
export interface Convergence {
  horizon: number;
  patience: number;
}

/** Cooling iterations per squared visit, and patience per visit (with a floor). */
export const HORIZON_PER_SQUARED_VISIT = 10;
export const PATIENCE_PER_VISIT = 40;
export const MIN_PATIENCE = 1000;
export const MIN_HORIZON = 2000;
export const CUBIC_FROM_VISITS = 50;

export function convergenceFor(visits: number): Convergence {
  return {
    // Cubic above 50 visits, so that 100-visit runs keep about the budget they had (Solomon at 5 s).
    horizon: Math.max(MIN_HORIZON, HORIZON_PER_SQUARED_VISIT * visits * visits * Math.max(1, visits / CUBIC_FROM_VISITS)),
    patience: Math.max(MIN_PATIENCE, PATIENCE_PER_VISIT * visits),
  };
}

/** The stop rule: past the cooling horizon and `patience` iterations without improvement. */
export function hasConverged(iterations: number, lastImprovement: number, convergence: Convergence): boolean {
  return iterations >= convergence.horizon && iterations - lastImprovement >= convergence.patience;
}

export class Budget {
  iterations = 0;
  /** Iteration count when the incumbent last improved. */
  lastImprovement = 0;
  private readonly startedAt: number;

  constructor(
    private readonly now: () => number,
    private readonly timeLimitMs: number,
    private readonly maxIterations: number,
    /** Early stop; none: the whole budget is spent. */
    private readonly convergence?: Convergence,
  ) {
    this.startedAt = now();
  }

  /** Share of the schedule used, from 0 to 1 (time, iterations or the convergence horizon, whichever is further along). */
  progress(): number {
    const iterationLimit = Math.min(this.maxIterations, this.convergence?.horizon ?? Infinity);
    return Math.min(1, Math.max(this.iterations / iterationLimit, (this.now() - this.startedAt) / this.timeLimitMs));
  }

  /** The time or the iteration limit is spent, or the search has converged. */
  done(): boolean {
    if (this.iterations >= this.maxIterations || this.now() - this.startedAt >= this.timeLimitMs) return true;
    return this.convergence !== undefined && hasConverged(this.iterations, this.lastImprovement, this.convergence);
  }

  improved(): void {
    this.lastImprovement = this.iterations;
  }

  elapsedMs(): number {
    return this.now() - this.startedAt;
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

/**
 * Ruin-and-recreate with simulated-annealing acceptance until the budget is spent or the search has
 * converged; the temperature falls geometrically over the remaining schedule. `polish` runs on every new
 * best solution. With an `exchange`, the search meets the others at each new epoch and goes on from a
 * better elite when one is handed back (nothing changes for a search that is never handed one).
 */
export function anneal(
  solution: Solution,
  ruinRecreate: RuinRecreate,
  budget: Budget,
  random: Random,
  incumbent: Incumbent,
  schedule: AnnealingSchedule,
  polish: (solution: Solution) => void,
  exchange?: EliteExchange,
): void {
  const from = Math.min(budget.progress(), 0.99);
  let unassigned = solution.droppedWeight;
  let cost = solution.cost;
  const ratio = schedule.endTemperature / schedule.startTemperature;
  budget.improved();
  let epoch = 0;
  while (!budget.done()) {
    if (exchange) {
      const now = exchange.epoch(budget.iterations);
      if (now > epoch) {
        epoch = now;
        const elite = exchange.sync(epoch, { dropped: incumbent.dropped, cost: incumbent.cost, snapshot: incumbent.snapshot });
        if (elite && isBetter(elite.dropped, elite.cost, incumbent.dropped, incumbent.cost)) {
          solution.restore(elite.snapshot);
          incumbent.offer(solution);
          budget.improved();
          unassigned = solution.droppedWeight;
          cost = solution.cost;
        }
      }
    }
    const progress = budget.progress();
    const temperature = schedule.startTemperature * Math.pow(ratio, Math.max(0, progress - from) / (1 - from));
    solution.begin();
    ruinRecreate.ruin();
    ruinRecreate.recreate([...solution.unassigned], true);
    budget.iterations++;
    const newCost = solution.cost;
    const threshold = cost - temperature * Math.log(random.next());
    if (isBetter(solution.droppedWeight, newCost, unassigned, threshold)) {
      solution.commit();
      if (incumbent.isImprovedBy(solution)) {
        polish(solution);
        incumbent.offer(solution);
        budget.improved();
      }
      unassigned = solution.droppedWeight;
      cost = solution.cost;
    } else {
      solution.rollback();
    }
  }
}
