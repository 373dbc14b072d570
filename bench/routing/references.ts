// Pooled reference plans for realistic days (issue #43's yardstick): per day, the best plan any long run
// has found — served weight by priority first, then the fleet's fixed cost, then cost (distance plus the
// underload penalty) — kept in a committed JSON file with its routes, so it can be re-checked and scored
// against. Pooled: a later run (another solver, more runs) replaces a day's plan only when it is better,
// and the day's run count adds up.
//   npm run bench:routing -- --set realistic --visits 100 --seeds 1,2,3 --write-references FILE --runs 10 --seconds 60
// solves each day `--runs` times for `--seconds` CPU-s (the whole budget, no early stop), checks every plan
// and merges the best into FILE; `--references FILE` in a paired comparison (compare.ts) scores each run
// against it.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { RoutingObjective, RoutingProblem, RoutingSolution } from "#shared/routing/model";
import { realisticDay } from "./early-stop.ts";
import { compareServed, servedByPriority } from "./features.ts";
import { costOf, solveChecked } from "./run.ts";

export interface ReferencePlan {
  /** The day's seed (`realisticDay(visits, seed)`). */
  day: number;
  visits: number;
  objective: RoutingObjective;
  servedByPriority: number[];
  fleetCost: number;
  /** Distance plus the underload penalty (1000 per unit), the objective after served visits and fleet. */
  cost: number;
  /** Runs pooled so far, and the budget of the one that found this plan. */
  runs: number;
  seconds: number;
  solverSeed: number;
  routes: Array<{ vehicleId: string; visitIds: string[] }>;
}

export interface ReferenceFile {
  note: string;
  plans: ReferencePlan[];
}

/** Negative when `a` is the better plan (more weight served, else a cheaper fleet, else a lower cost). */
export function comparePlans(
  a: Pick<ReferencePlan, "servedByPriority" | "fleetCost" | "cost">,
  b: Pick<ReferencePlan, "servedByPriority" | "fleetCost" | "cost">,
): number {
  return -compareServed(a.servedByPriority, b.servedByPriority) || a.fleetCost - b.fleetCost || a.cost - b.cost;
}

export function readReferences(file: string): ReferenceFile {
  if (!existsSync(file)) return { note: "", plans: [] };
  return JSON.parse(readFileSync(file, "utf8")) as ReferenceFile;
}

/** The reference for a day of this size and objective, if the file has one. */
export function referenceFor(references: ReferenceFile, day: number, visits: number, objective: RoutingObjective) {
  return references.plans.find((plan) => plan.day === day && plan.visits === visits && plan.objective === objective);
}

export function runReferences(options: {
  file: string;
  visits: number;
  seeds: number[];
  runs: number;
  seconds: number;
  objective: RoutingObjective;
  /** Tests: an iteration limit as well. */
  maxIterations?: number;
  log: (line: string) => void;
}): void {
  const { log } = options;
  const references = readReferences(options.file);
  log(
    `reference plans: ${options.visits}-visit days ${options.seeds.join(",")}, best of ${options.runs} × ${options.seconds} CPU-s each (whole budget), ` +
      `objective ${options.objective}, pooled into ${options.file}`,
  );
  for (const day of options.seeds) {
    const problem = realisticDay(options.visits, day);
    const existing = referenceFor(references, day, options.visits, options.objective);
    let best: ReferencePlan | undefined = existing;
    const firstRun = existing?.runs ?? 0;
    for (let run = 0; run < options.runs; run++) {
      // Solver seeds apart from the comparison's streams (day + 1000 × stream), and new ones for every pooled run.
      const solverSeed = day + 1000 * (100 + firstRun + run);
      const solution = solveChecked(problem, { ...options, seed: solverSeed, earlyStop: false }, `day ${day}`);
      const candidate = planOf(problem, solution, {
        day,
        visits: options.visits,
        objective: options.objective,
        seconds: options.seconds,
        solverSeed,
      });
      const better = !best || comparePlans(candidate, best) < 0;
      log(
        `day ${day} run ${firstRun + run + 1}: served ${candidate.servedByPriority.join("/")}, fixed ${candidate.fleetCost}, ` +
          `${candidate.cost.toFixed(1)}, ${solution.iterations} it${better ? " (best so far)" : ""}`,
      );
      if (better) best = candidate;
    }
    best!.runs = firstRun + options.runs;
    references.plans = [...references.plans.filter((plan) => plan !== existing), best!].sort(
      (a, b) => a.visits - b.visits || a.objective.localeCompare(b.objective) || a.day - b.day,
    );
    references.note =
      "Pooled reference plans for bench:routing (bench/routing/references.ts): per realistic day, the best plan of every run pooled so far.";
    // Written after every day, so an interrupted run keeps what it found.
    writeFileSync(options.file, formatReferences(references));
    log(
      `day ${day}: reference ${best!.servedByPriority.join("/")}, fixed ${best!.fleetCost}, ${best!.cost.toFixed(1)} (${best!.runs} runs)`,
    );
  }
}

function planOf(
  problem: RoutingProblem,
  solution: RoutingSolution,
  meta: { day: number; visits: number; objective: RoutingObjective; seconds: number; solverSeed: number },
): ReferencePlan {
  return {
    ...meta,
    servedByPriority: servedByPriority(problem, solution),
    fleetCost: solution.totals.fixedCost,
    cost: Math.round(costOf(solution) * 1000) / 1000,
    runs: 0,
    routes: solution.routes.map((route) => ({ vehicleId: route.vehicleId, visitIds: route.stops.map((stop) => stop.visitId) })),
  };
}

/** One day per line: a pooled run changes the lines of the days it improved. */
function formatReferences(references: ReferenceFile): string {
  return `{\n"note": ${JSON.stringify(references.note)},\n"plans": [\n${references.plans.map((plan) => JSON.stringify(plan)).join(",\n")}\n]}\n`;
}
