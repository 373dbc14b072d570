// What the search phases share: the budget (time and iterations), the best solution met so far, and
// the simulated-annealing loop over ruin-and-recreate steps.
import type { Random } from "./random.ts";
import type { RuinRecreate } from "./ruin-recreate.ts";
import type { Snapshot, Solution } from "./solution.ts";

export class Budget {
  iterations = 0;
  private readonly startedAt: number;

  constructor(
    private readonly now: () => number,
    private readonly timeLimitMs: number,
    private readonly maxIterations: number,
  ) {
    this.startedAt = now();
  }

  /** Share of the budget used, from 0 to 1 (time or iterations, whichever is further along). */
  progress(): number {
    return Math.min(1, Math.max(this.iterations / this.maxIterations, (this.now() - this.startedAt) / this.timeLimitMs));
  }
}

/** The best solution met: fewest unassigned visits, then lowest cost. */
export class Incumbent {
  unassigned: number;
  cost: number;
  snapshot: Snapshot;

  constructor(solution: Solution) {
    this.unassigned = solution.unassigned.size;
    this.cost = solution.cost;
    this.snapshot = solution.snapshot();
  }

  isImprovedBy(solution: Solution): boolean {
    return isBetter(solution.unassigned.size, solution.cost, this.unassigned, this.cost);
  }

  /** Keeps the solution if it is better; returns whether it was. */
  offer(solution: Solution): boolean {
    if (!this.isImprovedBy(solution)) return false;
    this.unassigned = solution.unassigned.size;
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
 * Ruin-and-recreate with simulated-annealing acceptance until the budget is spent; the temperature
 * falls geometrically over the remaining budget. `polish` runs on every new best solution.
 */
export function anneal(
  solution: Solution,
  ruinRecreate: RuinRecreate,
  budget: Budget,
  random: Random,
  incumbent: Incumbent,
  schedule: AnnealingSchedule,
  polish: (solution: Solution) => void,
): void {
  const from = budget.progress();
  let unassigned = solution.unassigned.size;
  let cost = solution.cost;
  const ratio = schedule.endTemperature / schedule.startTemperature;
  for (let progress = from; progress < 1; progress = budget.progress()) {
    const temperature = schedule.startTemperature * Math.pow(ratio, (progress - from) / (1 - from));
    solution.begin();
    ruinRecreate.ruin();
    ruinRecreate.recreate([...solution.unassigned], true);
    budget.iterations++;
    const newCost = solution.cost;
    const threshold = cost - temperature * Math.log(random.next());
    if (isBetter(solution.unassigned.size, newCost, unassigned, threshold)) {
      solution.commit();
      if (incumbent.isImprovedBy(solution)) {
        polish(solution);
        incumbent.offer(solution);
      }
      unassigned = solution.unassigned.size;
      cost = solution.cost;
    } else {
      solution.rollback();
    }
  }
}
