// `--threads 1,2`: solves each instance once per thread count at the same wall time (the same
// --seconds), side by side in one run, and prints each instance's gap per thread count, a per-family
// summary and the overall means. Thread 0 of every multi-thread run is the single-thread search with
// the same seed (shared/routing-threads/pool.ts), so on an idle machine with enough cores a column can
// only be worse than the 1-thread one through contention. Run it on an idle machine: with fewer free
// cores than threads the threads share a core and the comparison measures the neighbours.
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { bundleEntries, companionEntries } from "#infra/bundling";
import { repositoryRoot } from "#infra/repository-root";
import type { solveRoutingInParallel as SolveInParallel } from "#shared/routing-threads/pool";
import { benchmarkInstances, familyOf, formatGap, score, type BenchmarkOptions, type InstanceResult } from "./run.ts";
import { readVrptw, toRoutingProblem } from "./vrptw.ts";

export interface ThreadComparisonRow {
  name: string;
  family: string;
  /** One result per thread count, in the order of `threads`. */
  results: (InstanceResult & { iterations: number })[];
}

/**
 * The parallel solver as deployed: bundled by the Lambda bundling with its thread entry beside it, so
 * threads start from plain JavaScript (from source each thread would first compile the solver with tsx,
 * which takes seconds out of the budget on a busy machine).
 */
function bundledSolver(): { solveRoutingInParallel: typeof SolveInParallel; dispose: () => void } {
  const poolEntry = "shared/routing-threads/pool.ts";
  const outdir = mkdtempSync(join(tmpdir(), "bench-routing-threads-"));
  const directory = bundleEntries([poolEntry], {
    repositoryRoot,
    outdir,
    sourceMaps: false,
    companions: { [poolEntry]: companionEntries["functions/jobs/routing-run.ts"]! },
  }).get(poolEntry)!;
  const { solveRoutingInParallel } = createRequire(import.meta.url)(join(directory, "index.js")) as {
    solveRoutingInParallel: typeof SolveInParallel;
  };
  return { solveRoutingInParallel, dispose: () => rmSync(outdir, { recursive: true, force: true }) };
}

export async function runThreadComparison(options: BenchmarkOptions & { threadCounts: number[] }): Promise<ThreadComparisonRow[]> {
  const log = options.log ?? (() => {});
  const { solveRoutingInParallel, dispose } = bundledSolver();
  try {
    return await compare(options, log, solveRoutingInParallel);
  } finally {
    dispose();
  }
}

async function compare(
  options: BenchmarkOptions & { threadCounts: number[] },
  log: (line: string) => void,
  solveRoutingInParallel: typeof SolveInParallel,
): Promise<ThreadComparisonRow[]> {
  const { convention, reference, bks, folder, files } = benchmarkInstances(options);
  const counts = options.threadCounts;
  log(
    `set ${options.set}, objective ${options.objective}, convention ${convention}, ${options.seconds} s per instance and thread count (equal wall time), ` +
      `seed ${options.seed}, threads ${counts.join(",")} (${availableParallelism()} cores available), reference ${reference.file}` +
      `${reference.kind === "context" ? " (vehicles-first: context only, not a gap)" : ""}, ${files.length} instances`,
  );
  if (Math.max(...counts) > availableParallelism())
    log(`warning: more threads than cores (${availableParallelism()}): the threads share cores`);
  const rows: ThreadComparisonRow[] = [];
  for (const file of files) {
    const instance = readVrptw(join(folder, file));
    const best = bks.get(instance.name.toLowerCase());
    if (!best) throw new Error(`no reference for ${instance.name} in ${reference.file}`);
    const problem = toRoutingProblem(instance, convention);
    const row: ThreadComparisonRow = { name: instance.name, family: familyOf(instance.name), results: [] };
    for (const threads of counts) {
      const started = performance.now();
      const solution = await solveRoutingInParallel(problem, {
        threads,
        seed: options.seed,
        objective: options.objective,
        timeLimitMs: options.seconds * 1000,
        maxIterations: options.maxIterations,
        ...(options.earlyStop === false ? { earlyStop: false } : {}),
      });
      const result = {
        ...score(instance.name, problem, solution, best, (performance.now() - started) / 1000),
        iterations: solution.iterations,
      };
      row.results.push(result);
      log(
        `${instance.name.padEnd(10)} ${String(threads).padStart(2)} thread${threads === 1 ? " " : "s"}  vehicles ${String(result.vehicles).padStart(3)}  ` +
          `distance ${result.distance.toFixed(convention === "dimacs" ? 1 : 2).padStart(10)}  gap ${formatGap(result.gap)}  ` +
          `${result.iterations} iterations (best thread)  ${result.seconds.toFixed(1)} s${result.feasible ? "" : `  INFEASIBLE: ${result.violations.slice(0, 3).join("; ")}`}`,
      );
    }
    rows.push(row);
  }
  printComparison(log, rows, counts, reference.kind === "gap" ? "gap" : "Δ vs vehicles-first");
  return rows;
}

function printComparison(log: (line: string) => void, rows: ThreadComparisonRow[], counts: number[], label: string): void {
  const header = counts.map((threads) => `${threads}-thread ${label}`.padStart(14 + label.length - 3)).join("  ");
  const width = header.length / counts.length;
  log("");
  log(`${"instance".padEnd(10)}  ${header}`);
  for (const row of rows) {
    log(`${row.name.padEnd(10)}  ${row.results.map((r) => `${formatGap(r.gap)}${r.feasible ? " " : "!"}`.padStart(width)).join("  ")}`);
  }
  log("");
  log(`${"family".padEnd(6)}  instances  ${counts.map((threads) => `${threads}-thread mean / worst`.padStart(26)).join("  ")}  infeasible`);
  const families = [...new Set(rows.map((row) => row.family))];
  const line = (name: string, members: ThreadComparisonRow[]) =>
    `${name.padEnd(6)}  ${String(members.length).padStart(9)}  ` +
    counts
      .map((_, c) => {
        const gaps = members
          .map((row) => row.results[c]!)
          .filter((r) => r.feasible)
          .map((r) => r.gap);
        const mean = gaps.length ? gaps.reduce((a, b) => a + b, 0) / gaps.length : NaN;
        return `${formatGap(mean)} / ${formatGap(gaps.length ? Math.max(...gaps) : NaN)}`.padStart(26);
      })
      .join("  ") +
    `  ${counts.map((_, c) => members.filter((row) => !row.results[c]!.feasible).length).join("/")}`;
  for (const family of families)
    log(
      line(
        family,
        rows.filter((row) => row.family === family),
      ),
    );
  log(line("all", rows));
  if (counts.length > 1) {
    const [first] = counts;
    for (let c = 1; c < counts.length; c++) {
      const better = rows.filter((row) => row.results[c]!.gap < row.results[0]!.gap - 1e-9).length;
      const worse = rows.filter((row) => row.results[c]!.gap > row.results[0]!.gap + 1e-9).length;
      log(
        `${counts[c]} threads vs ${first}: better on ${better}, equal on ${rows.length - better - worse}, worse on ${worse} of ${rows.length} instances`,
      );
    }
  }
}
