// Early stop on realistic days: one generated day of N visits (`realisticProblem`, vehicles scaled with
// N) per seed, solved once with the early stop (capped at the budget) and once spending the whole
// budget; prints the time to stop (CPU and wall), the iterations, and the gap of the early-stopped plan
// to the full-budget one, then the medians over the seeds. With `clock: "cpu"` the solver's time budget
// runs on this process's CPU time, so a busy machine does not shrink the full-budget run.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { checkSolution } from "#shared/routing/check";
import type { RoutingObjective, RoutingProblem } from "#shared/routing/model";
import { solveRouting } from "#shared/routing/solver";
import { realisticProblem } from "./realistic.ts";
import { costOf, cpuMs, solverCpuClock } from "./run.ts";

export interface EarlyStopOptions {
  visits: number;
  /** Budget of the early-stopping run (its cap). */
  seconds: number;
  /** Budget of the full run it is compared with (default `seconds`): e.g. a smaller memory size's CPU against 1,769 MB's. */
  fullSeconds?: number;
  objective: RoutingObjective;
  seeds: number[];
  /**
   * Early runs per day, each with its own solver seed (the day's seed, then + 1000, + 2000, …; default 1): one
   * early plan's gap varies by several per cent with the random stream alone, so a median over one stream per
   * day can mislead (2026-11-26: builds that only drew other random numbers measured +3.5 to +3.8 % median over
   * 40 days where one stream had given +1.9 %).
   */
  streams?: number;
  clock: "wall" | "cpu";
  /** JSON file of full-budget results to reuse (and to add to), so that tuning the stop re-runs only the early side. */
  fullResults?: string;
  log: (line: string) => void;
}

/** What the comparison needs of a full-budget run. */
interface RunFigures {
  served: number;
  vehicles: number;
  /** Σ fixed cost of the vehicles used: the hierarchical objective's second measure, not the vehicle count. */
  fleetCost: number;
  cost: number;
  iterations: number;
  cpuSeconds: number;
  wallSeconds: number;
  endedBy: string;
}

/** Visits one vehicle of a realistic day serves comfortably (so every visit fits). */
export const VISITS_PER_VEHICLE = 20;

export function realisticDay(visits: number, seed: number): RoutingProblem {
  return realisticProblem(visits, Math.max(2, Math.ceil(visits / VISITS_PER_VEHICLE)), seed);
}

export interface EarlyStopRow {
  seed: number;
  /** Which early run of the day (its solver seed is the day's + 1000 × stream). */
  stream: number;
  cpuSeconds: number;
  wallSeconds: number;
  iterations: number;
  endedBy: string;
  sameServiceAndFleet: boolean;
  /** Early-stopped cost over the full-budget one, in percent. */
  gap: number;
  fullCpuSeconds: number;
}

export function runEarlyStop(options: EarlyStopOptions): EarlyStopRow[] {
  const { log } = options;
  log(
    `early stop on realistic days: ${options.visits} visits, ${Math.ceil(options.visits / VISITS_PER_VEHICLE)} vehicles, early stop capped at ${options.seconds}, full budget ${options.fullSeconds ?? options.seconds} ${options.clock === "cpu" ? "CPU-" : ""}s, objective ${options.objective}, seeds ${options.seeds.join(",")}`,
  );
  const streams = options.streams ?? 1;
  if (!Number.isInteger(streams) || streams < 1) throw new Error(`streams must be a whole number ≥ 1, got ${options.streams}`);
  const rows: EarlyStopRow[] = [];
  const cache: Record<string, RunFigures> =
    options.fullResults && existsSync(options.fullResults) ? JSON.parse(readFileSync(options.fullResults, "utf8")) : {};
  for (const seed of options.seeds) {
    const problem = realisticDay(options.visits, seed);
    const fullSeconds = options.fullSeconds ?? options.seconds;
    const solve = (earlyStop: boolean, solverSeed = seed) => {
      const wallStart = performance.now();
      const cpuStart = cpuMs();
      const solution = solveRouting(problem, {
        seed: solverSeed,
        objective: options.objective,
        timeLimitMs: (earlyStop ? options.seconds : fullSeconds) * 1000,
        earlyStop,
        ...(options.clock === "cpu" ? { now: solverCpuClock() } : {}),
      });
      const violations = checkSolution(problem, solution).violations;
      if (violations.length) throw new Error(`seed ${seed}: infeasible: ${violations.slice(0, 3).join("; ")}`);
      return {
        served: solution.totals.visits,
        vehicles: solution.totals.vehicles,
        fleetCost: solution.totals.fixedCost,
        cost: costOf(solution),
        iterations: solution.iterations,
        cpuSeconds: (cpuMs() - cpuStart) / 1000,
        wallSeconds: (performance.now() - wallStart) / 1000,
        endedBy: solution.endedBy,
      } satisfies RunFigures;
    };
    const key = `${options.visits}/${seed}/${fullSeconds}/${options.objective}/${options.clock}`;
    // Results cached before the fleet cost was recorded cannot be compared: solved again.
    const reused = cache[key]?.fleetCost !== undefined;
    const describe = (run: RunFigures) =>
      `${run.served} served, ${run.vehicles} veh (fixed ${run.fleetCost}), ${(run.cost / 1000).toFixed(2)} (km + underload), ${run.iterations} it, ${run.cpuSeconds.toFixed(2)} CPU-s, ${run.wallSeconds.toFixed(2)} s wall`;
    const earlyRuns = Array.from({ length: streams }, (_, stream) => solve(true, seed + 1000 * stream));
    const full = reused ? cache[key]! : solve(false);
    if (options.fullResults && !reused) writeFileSync(options.fullResults, JSON.stringify({ ...cache, [key]: full }, null, 1));
    cache[key] = full;
    earlyRuns.forEach((early, stream) => {
      // Equal fleets by fixed cost: on realistic days a refrigerated van costs 2, so two plans of 4 vehicles may
      // differ in the hierarchical objective, and the one with the costlier fleet can drive far less.
      const same = early.served === full.served && early.vehicles === full.vehicles && early.fleetCost === full.fleetCost;
      const gap = (early.cost / full.cost - 1) * 100;
      rows.push({
        seed,
        stream,
        cpuSeconds: early.cpuSeconds,
        wallSeconds: early.wallSeconds,
        iterations: early.iterations,
        endedBy: early.endedBy,
        sameServiceAndFleet: same,
        gap,
        fullCpuSeconds: full.cpuSeconds,
      });
      const label = stream === 0 ? `${seed}` : `${seed}.${stream}`;
      log(
        `seed ${label}  early (${early.endedBy}): ${describe(early)}  |  full${reused ? " (reused)" : ""}: ${describe(full)}  |  gap ${gap >= 0 ? "+" : ""}${gap.toFixed(2)} %${same ? "" : "  (served or fleet differ)"}`,
      );
    });
  }
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  log(
    `median over ${rows.length} early runs: stop after ${median(rows.map((r) => r.cpuSeconds)).toFixed(2)} CPU-s (${median(rows.map((r) => r.wallSeconds)).toFixed(2)} s wall), ` +
      `${median(rows.map((r) => r.iterations)).toFixed(0)} iterations, gap ${median(rows.map((r) => r.gap)).toFixed(2)} % (worst ${Math.max(...rows.map((r) => r.gap)).toFixed(2)} %); ` +
      `early stop fired on ${rows.filter((r) => r.endedBy === "earlyStop").length}/${rows.length}; equal served and fleet on ${rows.filter((r) => r.sameServiceAndFleet).length}/${rows.length}`,
  );
  return rows;
}
