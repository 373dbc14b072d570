// Runs the solver over a benchmark set and compares each result with a reference table, after
// re-checking its feasibility independently. Gaps follow SOURCES.md:
// - `exact` convention: double-precision Euclidean distances. Solomon distance-only runs are scored against
//   `bks_solomon_distance_only.csv` (R109 and RC103 hold lower bounds, flagged "LB" and also left out of a
//   second mean); hierarchical runs against `bks_hierarchical.csv`, vehicles first (the distance gap only at
//   equal counts). GH distance-only runs have no distance-only reference: they are shown beside the
//   vehicles-first table as context (vehicles and distance difference), with no gap headline, because a run
//   with more vehicles "beats" that table.
// - `dimacs` convention (distance objective): arcs truncated to one decimal; GH1000 against
//   `bks_gh_dimacs.csv`, Solomon against the proven optima of `bks_solomon_exact_distance_truncated.csv`
//   (only the instances it covers).
import { fork } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkSolution } from "#shared/routing/check";
import type { RoutingObjective, RoutingProblem, RoutingSolution, SolveOptions } from "#shared/routing/model";
import { solveRouting } from "#shared/routing/solver";
import { readBestKnown, readVrptw, toRoutingProblem, type BestKnown, type DistanceConvention } from "./vrptw.ts";

export type BenchmarkSet = "solomon" | "gh200" | "gh400" | "gh1000";

export interface BenchmarkOptions {
  set: BenchmarkSet;
  /** Folder holding SOURCES.md, the BKS tables and the instance folders. */
  dataDir: string;
  seconds: number;
  objective: RoutingObjective;
  seed: number;
  /** Default `exact`. */
  convention?: DistanceConvention;
  /** Instance names (case-insensitive) to run; all when empty. */
  only?: string[];
  /** Iteration limit per instance, for quick deterministic runs. */
  maxIterations?: number;
  /** Stop early once the search has converged (the solver's default). */
  earlyStop?: boolean;
  /** Worker threads per solve (1: single-threaded). */
  threads?: number;
  /** `cpu`: the solver's budget runs on this process's CPU time, so other processes on the machine do not shrink it (default `wall`). */
  clock?: "wall" | "cpu";
  log?: (line: string) => void;
}

export interface InstanceResult {
  name: string;
  family: string;
  vehicles: number;
  distance: number;
  best: BestKnown;
  /** Distance gap to the reference, in percent. */
  gap: number;
  feasible: boolean;
  violations: string[];
  seconds: number;
}

export interface FamilySummary {
  family: string;
  instances: number;
  vehicles: number;
  /** Σ reference vehicles; NaN when the reference has none (DIMACS). */
  bestVehicles: number;
  meanGap: number;
  worstGap: number;
  infeasible: number;
}

export interface BenchmarkSummary {
  /** `gap`: a true gap against a same-objective reference; `context`: only a comparison with the vehicles-first table. */
  kind: "gap" | "context";
  reference: string;
  results: InstanceResult[];
  families: FamilySummary[];
  meanGap: number;
  worstGap: number;
  /** Mean gap leaving out the rows that hold lower bounds (NaN when there are none). */
  meanGapWithoutLowerBounds: number;
  atBestKnown: number;
  /** Instances solved with the BKS vehicle count or fewer. */
  vehicleHits: number;
  infeasible: number;
  seconds: number;
}

/** The benchmark data lives beside the repository: ../shared/benchmarks/vrptw. */
export const VRPTW_DATA_DIR = fileURLToPath(new URL("../../../shared/benchmarks/vrptw/", import.meta.url));

const FOLDERS: Record<BenchmarkSet, string> = {
  solomon: "solomon",
  gh200: "gehring_homberger/200",
  gh400: "gehring_homberger/400",
  gh1000: "gehring_homberger/1000",
};

/** The reference table and what its comparison means. */
export function referenceFor(
  set: BenchmarkSet,
  objective: RoutingObjective,
  convention: DistanceConvention,
): { file: string; kind: "gap" | "context" } {
  if (convention === "dimacs") {
    if (objective !== "distance") throw new Error("--convention dimacs scores distance-only runs: use --objective distance");
    if (set === "gh1000") return { file: "bks_gh_dimacs.csv", kind: "gap" };
    if (set === "solomon") return { file: "bks_solomon_exact_distance_truncated.csv", kind: "gap" };
    throw new Error(`no DIMACS reference for ${set} (bks_gh_dimacs.csv covers GH1000 only)`);
  }
  if (set === "solomon") return { file: objective === "distance" ? "bks_solomon_distance_only.csv" : "bks_hierarchical.csv", kind: "gap" };
  return { file: "bks_hierarchical.csv", kind: objective === "hierarchical" ? "gap" : "context" };
}

/** C1, R2, RC1 for Solomon names; c1, r2, rc1 for GH names (`r1_10_1`). */
export function familyOf(name: string): string {
  const gh = /^([a-z]+\d)_/i.exec(name);
  if (gh) return gh[1]!.toLowerCase();
  return /^([a-z]+\d)/i.exec(name)?.[1]?.toUpperCase() ?? name;
}

/** The instance files a run covers (in natural order), their folder, and the reference table. */
export function benchmarkInstances(options: BenchmarkOptions) {
  const convention = options.convention ?? "exact";
  const reference = referenceFor(options.set, options.objective, convention);
  const bks = readBestKnown(join(options.dataDir, reference.file));
  const folder = join(options.dataDir, FOLDERS[options.set]);
  const only = new Set((options.only ?? []).map((name) => name.toLowerCase()));
  const files = readdirSync(folder)
    .filter((file) => file.endsWith(".txt") && (only.size === 0 || only.has(file.slice(0, -4).toLowerCase())))
    .filter((file) => convention === "exact" || bks.has(file.slice(0, -4).toLowerCase()))
    .sort(naturalOrder);
  return { convention, reference, bks, folder, files };
}

/** The named instances of a set (all when `only` is empty) as routing problems, each with solver seed 1. */
export function benchmarkProblems(
  options: Pick<BenchmarkOptions, "set" | "objective" | "convention" | "only">,
): { name: string; problem: RoutingProblem; seed: number }[] {
  const { convention, folder, files } = benchmarkInstances({ ...options, dataDir: VRPTW_DATA_DIR, seconds: 0, seed: 1 });
  return files.map((file) => {
    const instance = readVrptw(join(folder, file));
    return { name: instance.name, problem: toRoutingProblem(instance, convention), seed: 1 };
  });
}

export function runBenchmark(options: BenchmarkOptions): BenchmarkSummary {
  const log = options.log ?? (() => {});
  const { convention, reference, files } = benchmarkInstances(options);
  log(
    `set ${options.set}, objective ${options.objective}, convention ${convention}, ${options.seconds} ${options.clock === "cpu" ? "CPU-" : ""}s per instance, seed ${options.seed}, ` +
      `reference ${reference.file}${reference.kind === "context" ? " (vehicles-first: context only, not a gap)" : ""}, ${files.length} instances`,
  );
  const results: InstanceResult[] = [];
  for (const file of files) {
    results.push(solveInstance(options, file));
    logResult(log, results.at(-1)!, reference.kind, convention);
  }
  const summary = summarise(results, options.objective, reference.kind, reference.file);
  printSummary(log, summary, options.objective);
  return summary;
}

/** This process's CPU time in ms (user + system): a clock that stands still while other processes run. */
export const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/**
 * What the routing benches compare: distance plus the underload penalty (default 1000 per unit), the objective after
 * served visits and fleet cost, so equal plans show equal costs to the last digit.
 */
export function costOf(solution: RoutingSolution): number {
  return solution.totals.distance + 1000 * solution.routes.reduce((sum, route) => sum + route.underload, 0);
}

/**
 * The CPU clock handed to a solver, which reads its clock once per iteration: getrusage (what cpuMs reads, a
 * few µs a call) is read at most once per wall-clock millisecond and interpolated with performance.now() in
 * between (a busy single thread's CPU time advances with the wall clock; the process's other threads, GC's
 * among them, are caught up at the next read). Read on every iteration it took 8–12 % of a 100-visit search's
 * CPU (profiled 2026-11-26), a cost the Date.now clock the run worker passes does not have. Never runs
 * backwards; a fresh clock per solve.
 */
export function solverCpuClock(): () => number {
  let cpuAt = cpuMs();
  let wallAt = performance.now();
  let last = cpuAt;
  return () => {
    const wall = performance.now();
    if (wall - wallAt >= 1) {
      cpuAt = cpuMs();
      wallAt = wall;
    }
    last = Math.max(last, cpuAt + (wall - wallAt));
    return last;
  };
}

/** The solver options every benchmark passes: seed, objective, time budget (on the wall or the CPU clock), iteration limit, early stop. */
export function benchSolveOptions(options: {
  seconds: number;
  objective: RoutingObjective;
  seed: number;
  maxIterations?: number;
  earlyStop?: boolean;
  clock?: "wall" | "cpu";
}): SolveOptions {
  return {
    seed: options.seed,
    objective: options.objective,
    timeLimitMs: options.seconds * 1000,
    maxIterations: options.maxIterations,
    earlyStop: options.earlyStop !== false,
    ...(options.clock === "cpu" ? { now: solverCpuClock() } : {}),
  };
}

/**
 * One solve of `problem` on the CPU clock (`benchSolveOptions` with `clock: "cpu"`), held to the independent
 * checker of this build whichever build solved it: a violation throws, naming `label`.
 */
export function solveChecked(
  problem: RoutingProblem,
  options: Parameters<typeof benchSolveOptions>[0],
  label: string,
  solve: (problem: RoutingProblem, options: SolveOptions) => RoutingSolution = solveRouting,
): RoutingSolution {
  const solution = solve(problem, benchSolveOptions({ ...options, clock: "cpu" }));
  const { violations } = checkSolution(problem, solution);
  if (violations.length)
    throw new Error(`${label} seed ${options.seed}: ${violations.length} violations: ${violations.slice(0, 3).join("; ")}`);
  return solution;
}

/** Solves one instance file of the set, single-threaded, and scores it against the reference. */
export function solveInstance(options: BenchmarkOptions, file: string): InstanceResult {
  const { convention, reference, bks, folder } = benchmarkInstances({ ...options, only: [] });
  const instance = readVrptw(join(folder, file));
  const best = bks.get(instance.name.toLowerCase());
  if (!best) throw new Error(`no reference for ${instance.name} in ${reference.file}`);
  const problem = toRoutingProblem(instance, convention);
  const started = performance.now();
  const solution = solveRouting(problem, benchSolveOptions(options));
  return score(instance.name, problem, solution, best, (performance.now() - started) / 1000);
}

/**
 * `--jobs N`: the same benchmark with N instances solved at a time, each single-threaded in its own
 * process (bench/routing/solve-instance.ts), so a 60-instance GH1000 run at 60 s takes 60/N minutes on
 * N otherwise idle cores. Each solve still has one core to itself: the figures compare with a serial run
 * only when nothing else runs on the machine.
 */
export async function runBenchmarkInJobs(options: BenchmarkOptions, jobs: number): Promise<BenchmarkSummary> {
  const log = options.log ?? (() => {});
  const { convention, reference, files } = benchmarkInstances(options);
  log(
    `set ${options.set}, objective ${options.objective}, convention ${convention}, ${options.seconds} ${options.clock === "cpu" ? "CPU-" : ""}s per instance, seed ${options.seed}, ` +
      `reference ${reference.file}${reference.kind === "context" ? " (vehicles-first: context only, not a gap)" : ""}, ${files.length} instances, ${jobs} at a time`,
  );
  const { log: _log, ...childOptions } = options;
  const queue = [...files];
  const results: InstanceResult[] = [];
  const solveInChild = (file: string) =>
    new Promise<InstanceResult>((resolve, reject) => {
      const child = fork(fileURLToPath(new URL("./solve-instance.ts", import.meta.url)), [JSON.stringify(childOptions), file], {
        execArgv: ["--import", "tsx"],
      });
      child.once("message", (message) => {
        const result = message as InstanceResult;
        // IPC carries JSON: a reference without vehicles (NaN, the DIMACS table) arrives as null.
        resolve({ ...result, best: { ...result.best, vehicles: result.best.vehicles ?? Number.NaN } });
      });
      child.once("error", reject);
      child.once("exit", (code) => (code === 0 ? undefined : reject(new Error(`${file}: solver process exited with ${code}`))));
    });
  await Promise.all(
    Array.from({ length: Math.min(jobs, files.length) }, async () => {
      for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
        const result = await solveInChild(file);
        results.push(result);
        logResult(log, result, reference.kind, convention);
      }
    }),
  );
  results.sort((a, b) => naturalOrder(a.name, b.name));
  const summary = summarise(results, options.objective, reference.kind, reference.file);
  printSummary(log, summary, options.objective);
  return summary;
}

export function score(
  name: string,
  problem: Parameters<typeof checkSolution>[0],
  solution: Parameters<typeof checkSolution>[1],
  best: BestKnown,
  seconds: number,
): InstanceResult {
  const { violations, distance } = checkSolution(problem, solution);
  const feasible = violations.length === 0 && solution.dropped.length === 0;
  if (solution.dropped.length > 0) violations.push(`${solution.dropped.length} visits dropped`);
  return {
    name,
    family: familyOf(name),
    vehicles: solution.routes.length,
    distance,
    best,
    gap: ((distance - best.distance) / best.distance) * 100,
    feasible,
    violations,
    seconds,
  };
}

function logResult(log: (line: string) => void, result: InstanceResult, kind: "gap" | "context", convention: DistanceConvention): void {
  const { best } = result;
  const digits = convention === "dimacs" ? 1 : 2;
  const bestVehicles = Number.isNaN(best.vehicles) ? "" : ` (bks ${String(best.vehicles).padStart(3)})`;
  log(
    `${result.name.padEnd(10)} vehicles ${String(result.vehicles).padStart(3)}${bestVehicles}  ` +
      `distance ${result.distance.toFixed(digits).padStart(10)} (${best.lowerBound ? "LB " : "bks"} ${best.distance.toFixed(digits).padStart(10)})  ` +
      `${kind === "gap" ? "gap" : "Δ vs vehicles-first"} ${formatGap(result.gap)}${best.lowerBound ? " LB" : ""}  ` +
      `${result.seconds.toFixed(1)} s${result.feasible ? "" : `  INFEASIBLE: ${result.violations.slice(0, 3).join("; ")}`}`,
  );
}

export function summarise(
  results: InstanceResult[],
  objective: RoutingObjective,
  kind: "gap" | "context",
  referenceFile: string,
): BenchmarkSummary {
  const feasible = results.filter((r) => r.feasible);
  // Under the hierarchical objective a distance gap only means something at the BKS vehicle count.
  const compared = objective === "hierarchical" ? feasible.filter((r) => r.vehicles === r.best.vehicles) : feasible;
  const gaps = compared.map((r) => r.gap);
  const withoutBounds = compared.filter((r) => !r.best.lowerBound);
  const families = [...new Set(results.map((r) => r.family))].map((family): FamilySummary => {
    const members = results.filter((r) => r.family === family);
    const memberGaps = compared.filter((r) => r.family === family).map((r) => r.gap);
    return {
      family,
      instances: members.length,
      vehicles: members.reduce((sum, r) => sum + r.vehicles, 0),
      bestVehicles: members.reduce((sum, r) => sum + r.best.vehicles, 0),
      meanGap: mean(memberGaps),
      worstGap: memberGaps.length ? Math.max(...memberGaps) : NaN,
      infeasible: members.filter((r) => !r.feasible).length,
    };
  });
  return {
    kind,
    reference: referenceFile,
    results,
    families,
    meanGap: mean(gaps),
    worstGap: gaps.length ? Math.max(...gaps) : NaN,
    meanGapWithoutLowerBounds: withoutBounds.length < compared.length ? mean(withoutBounds.map((r) => r.gap)) : NaN,
    atBestKnown: compared.filter((r) => r.gap <= 0.005).length,
    vehicleHits: feasible.filter((r) => r.vehicles <= r.best.vehicles).length,
    infeasible: results.length - feasible.length,
    seconds: results.reduce((sum, r) => sum + r.seconds, 0),
  };
}

function printSummary(log: (line: string) => void, summary: BenchmarkSummary, objective: RoutingObjective): void {
  const { results } = summary;
  const label = summary.kind === "gap" ? "mean gap" : "mean Δ vs vehicles-first (context)";
  const hasVehicles = results.every((r) => !Number.isNaN(r.best.vehicles));
  log(`family  instances  vehicles${hasVehicles ? " (bks)" : ""}  ${label.padEnd(12)}  worst     infeasible`);
  for (const f of summary.families) {
    log(
      `${f.family.padEnd(6)}  ${String(f.instances).padStart(9)}  ${String(f.vehicles).padStart(8)}${hasVehicles ? ` (${f.bestVehicles})` : ""}  ` +
        `${formatGap(f.meanGap).padEnd(12)}  ${formatGap(f.worstGap)}  ${f.infeasible}`,
    );
  }
  const vehicles = results.reduce((sum, r) => sum + r.vehicles, 0);
  const bestVehicles = results.reduce((sum, r) => sum + r.best.vehicles, 0);
  if (summary.kind === "context") {
    log(
      `summary: ${results.length} instances, ${vehicles} vehicles (vehicles-first table ${bestVehicles}); no distance-only reference for this set, ` +
        `so no gap: mean Δ vs the vehicles-first table ${formatGap(summary.meanGap)} is context only; infeasible ${summary.infeasible}, total ${summary.seconds.toFixed(1)} s`,
    );
    return;
  }
  log(
    `summary: ${results.length} instances, ${vehicles} vehicles${hasVehicles ? ` (bks ${bestVehicles})` : ""}, mean gap ${formatGap(summary.meanGap)}` +
      `${Number.isNaN(summary.meanGapWithoutLowerBounds) ? "" : ` (${formatGap(summary.meanGapWithoutLowerBounds)} without the lower-bound rows)`}, ` +
      `worst gap ${formatGap(summary.worstGap)}` +
      `${objective === "hierarchical" ? ` (over ${results.filter((r) => r.feasible && r.vehicles === r.best.vehicles).length} at BKS vehicle count)` : ""}, ` +
      `at BKS ${summary.atBestKnown}${hasVehicles ? `, BKS vehicle count ${summary.vehicleHits}/${results.length}` : ""}, ` +
      `infeasible ${summary.infeasible}, total ${summary.seconds.toFixed(1)} s`,
  );
}

function mean(values: number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
}

export function formatGap(gap: number): string {
  return `${gap >= 0 ? "+" : ""}${gap.toFixed(2)}%`.padStart(7);
}

function naturalOrder(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}
