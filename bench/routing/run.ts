// Runs the solver over a benchmark set and compares each result with the best-known solution, after
// re-checking its feasibility independently. Gaps follow SOURCES.md: exact Euclidean distances; under the
// hierarchical objective vehicles are compared first and the distance gap is only meaningful at equal counts.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkSolution } from "#shared/routing/check";
import type { RoutingObjective } from "#shared/routing/model";
import { solveRouting } from "#shared/routing/solver";
import { readBestKnown, readVrptw, toRoutingProblem } from "./vrptw.ts";

export type BenchmarkSet = "solomon" | "gh200" | "gh400" | "gh1000";

export interface BenchmarkOptions {
  set: BenchmarkSet;
  /** Folder holding SOURCES.md, the BKS tables and the instance folders. */
  dataDir: string;
  seconds: number;
  objective: RoutingObjective;
  seed: number;
  /** Instance names (case-insensitive) to run; all when empty. */
  only?: string[];
  /** Iteration limit per instance, for quick deterministic runs. */
  maxIterations?: number;
  log?: (line: string) => void;
}

export interface InstanceResult {
  name: string;
  vehicles: number;
  distance: number;
  best: { vehicles: number; distance: number };
  /** Distance gap to the BKS, in percent. */
  gap: number;
  feasible: boolean;
  violations: string[];
  seconds: number;
}

export interface BenchmarkSummary {
  results: InstanceResult[];
  meanGap: number;
  worstGap: number;
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

export function runBenchmark(options: BenchmarkOptions): BenchmarkSummary {
  const log = options.log ?? (() => {});
  const bksFile = options.set === "solomon" && options.objective === "distance" ? "bks_solomon_distance_only.csv" : "bks_hierarchical.csv";
  const bks = readBestKnown(join(options.dataDir, bksFile));
  const folder = join(options.dataDir, FOLDERS[options.set]);
  const only = new Set((options.only ?? []).map((name) => name.toLowerCase()));
  const files = readdirSync(folder)
    .filter((file) => file.endsWith(".txt") && (only.size === 0 || only.has(file.slice(0, -4).toLowerCase())))
    .sort(naturalOrder);
  log(`set ${options.set}, objective ${options.objective}, ${options.seconds} s per instance, seed ${options.seed}, BKS ${bksFile}`);
  const results: InstanceResult[] = [];
  for (const file of files) {
    const instance = readVrptw(join(folder, file));
    const best = bks.get(instance.name.toLowerCase());
    if (!best) throw new Error(`no BKS for ${instance.name} in ${bksFile}`);
    const problem = toRoutingProblem(instance);
    const started = performance.now();
    const solution = solveRouting(problem, {
      seed: options.seed,
      objective: options.objective,
      timeLimitMs: options.seconds * 1000,
      maxIterations: options.maxIterations,
    });
    const seconds = (performance.now() - started) / 1000;
    const { violations, distance } = checkSolution(problem, solution);
    const feasible = violations.length === 0 && solution.dropped.length === 0;
    if (solution.dropped.length > 0) violations.push(`${solution.dropped.length} visits dropped`);
    const result: InstanceResult = {
      name: instance.name,
      vehicles: solution.routes.length,
      distance,
      best,
      gap: ((distance - best.distance) / best.distance) * 100,
      feasible,
      violations,
      seconds,
    };
    results.push(result);
    log(
      `${result.name.padEnd(10)} vehicles ${String(result.vehicles).padStart(3)} (bks ${String(best.vehicles).padStart(3)})  ` +
        `distance ${distance.toFixed(2).padStart(10)} (bks ${best.distance.toFixed(2).padStart(10)})  gap ${formatGap(result.gap)}  ` +
        `${seconds.toFixed(1)} s${feasible ? "" : `  INFEASIBLE: ${violations.slice(0, 3).join("; ")}`}`,
    );
  }
  const feasible = results.filter((r) => r.feasible);
  // Under the hierarchical objective a distance gap only means something at the BKS vehicle count.
  const compared = options.objective === "hierarchical" ? feasible.filter((r) => r.vehicles === r.best.vehicles) : feasible;
  const gaps = compared.map((r) => r.gap);
  const summary: BenchmarkSummary = {
    results,
    meanGap: gaps.length ? gaps.reduce((a, b) => a + b, 0) / gaps.length : NaN,
    worstGap: gaps.length ? Math.max(...gaps) : NaN,
    atBestKnown: compared.filter((r) => r.gap <= 0.005).length,
    vehicleHits: feasible.filter((r) => r.vehicles <= r.best.vehicles).length,
    infeasible: results.length - feasible.length,
    seconds: results.reduce((sum, r) => sum + r.seconds, 0),
  };
  log(
    `summary: ${results.length} instances, mean gap ${formatGap(summary.meanGap)}, worst gap ${formatGap(summary.worstGap)}` +
      `${options.objective === "hierarchical" ? ` (over ${compared.length} at BKS vehicle count)` : ""}, ` +
      `at BKS ${summary.atBestKnown}, BKS vehicle count ${summary.vehicleHits}/${results.length}, ` +
      `infeasible ${summary.infeasible}, total ${summary.seconds.toFixed(1)} s`,
  );
  return summary;
}

function formatGap(gap: number): string {
  return `${gap >= 0 ? "+" : ""}${gap.toFixed(2)}%`.padStart(7);
}

function naturalOrder(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}
