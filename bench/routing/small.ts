// Early stop on small runs: each instance is solved twice per seed, once with the early stop (the
// solver's default) and once spending the whole budget, and the two objectives are compared. Instances:
// the Solomon 25-customer subsets (depot and customers 1–25 of each Solomon file, the classic "25"
// instances) and realistic random days of 10, 25 and 50 visits (`realisticProblem`, two seeds each).
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { checkSolution } from "#shared/routing/check";
import type { RoutingObjective, RoutingProblem, RoutingSolution } from "#shared/routing/model";
import { solveRouting } from "#shared/routing/solver";
import { realisticProblem } from "./realistic.ts";
import { VRPTW_DATA_DIR } from "./run.ts";
import { readVrptw, toRoutingProblem } from "./vrptw.ts";

export interface SmallOptions {
  /** Budget of the full run (and the time cap of the early-stopping one). */
  seconds: number;
  objective: RoutingObjective;
  seeds: number[];
  /** Solomon names (case-insensitive) to take 25-customer subsets of; all 56 when empty. */
  only?: string[];
  log: (line: string) => void;
}

export function smallInstances(only: string[] = []): Array<{ name: string; problem: RoutingProblem }> {
  const wanted = new Set(only.map((name) => name.toLowerCase()));
  const folder = join(VRPTW_DATA_DIR, "solomon");
  const solomon = readdirSync(folder)
    .filter((file) => file.endsWith(".txt") && (wanted.size === 0 || wanted.has(file.slice(0, -4).toLowerCase())))
    .sort((a, b) => a.localeCompare(b, "en", { numeric: true }))
    .map((file) => {
      const instance = readVrptw(join(folder, file));
      return { name: `${instance.name}.25`, problem: toRoutingProblem({ ...instance, nodes: instance.nodes.slice(0, 26) }) };
    });
  const random = [10, 25, 50].flatMap((visits) =>
    [1, 2].map((seed) => ({
      name: `random-${visits}-s${seed}`,
      problem: realisticProblem(visits, Math.max(2, Math.ceil(visits / 8)), seed),
    })),
  );
  return [...solomon, ...random];
}

/** Objective order: served visits, then (hierarchical) vehicles, then distance. */
function objectiveOf(solution: RoutingSolution, objective: RoutingObjective): [number, number, number] {
  return [solution.totals.visits, objective === "hierarchical" ? solution.totals.vehicles : 0, solution.totals.distance];
}

export function runSmall(options: SmallOptions): { runs: number; equal: number; better: number; worse: number; maxSeconds: number } {
  const { log } = options;
  const instances = smallInstances(options.only);
  log(
    `early stop vs a full ${options.seconds} s budget, objective ${options.objective}, seeds ${options.seeds.join(",")}, ${instances.length} instances`,
  );
  let runs = 0;
  let equal = 0;
  let better = 0;
  let worse = 0;
  let maxSeconds = 0;
  let maxCpu = 0;
  let earlyTotal = 0;
  for (const { name, problem } of instances) {
    for (const seed of options.seeds) {
      const timed = (earlyStop: boolean) => {
        const started = performance.now();
        const cpuBefore = process.cpuUsage();
        const solution = solveRouting(problem, { seed, objective: options.objective, timeLimitMs: options.seconds * 1000, earlyStop });
        const seconds = (performance.now() - started) / 1000;
        const cpu = process.cpuUsage(cpuBefore);
        const cpuSeconds = (cpu.user + cpu.system) / 1e6;
        const violations = checkSolution(problem, solution).violations;
        if (violations.length) throw new Error(`${name} seed ${seed}: infeasible: ${violations.slice(0, 3).join("; ")}`);
        return { solution, seconds, cpuSeconds };
      };
      const early = timed(true);
      const full = timed(false);
      const a = objectiveOf(early.solution, options.objective);
      const b = objectiveOf(full.solution, options.objective);
      const cmp =
        a[0] !== b[0] ? b[0] - a[0] : a[1] !== b[1] ? a[1] - b[1] : Math.abs(a[2] - b[2]) <= 1e-6 * Math.max(1, b[2]) ? 0 : a[2] - b[2];
      runs++;
      if (cmp === 0) equal++;
      else if (cmp < 0) better++;
      else worse++;
      maxSeconds = Math.max(maxSeconds, early.seconds);
      maxCpu = Math.max(maxCpu, early.cpuSeconds);
      earlyTotal += early.seconds;
      log(
        `${name.padEnd(16)} seed ${seed}  early ${early.seconds.toFixed(2)} s (cpu ${early.cpuSeconds.toFixed(2)}) ${early.solution.iterations} it: ${a[0]} visits, ${early.solution.totals.vehicles} veh, ${a[2].toFixed(2)}  |  ` +
          `full ${full.seconds.toFixed(1)} s ${full.solution.iterations} it: ${b[0]} visits, ${full.solution.totals.vehicles} veh, ${b[2].toFixed(2)}  ${cmp === 0 ? "equal" : cmp < 0 ? "EARLY BETTER" : "EARLY WORSE"}`,
      );
    }
  }
  log(
    `summary: ${runs} runs, early stop equal ${equal}, better ${better}, worse ${worse}; early-stop wall max ${maxSeconds.toFixed(2)} s (cpu max ${maxCpu.toFixed(2)} s), ` +
      `mean ${(earlyTotal / Math.max(1, runs)).toFixed(2)} s (full budget ${options.seconds} s each)`,
  );
  return { runs, equal, better, worse, maxSeconds };
}
