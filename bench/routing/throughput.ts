// Iterations per CPU-second of this solver against another build of it, at a fixed iteration limit, so that a
// speed-up that should leave the plans unchanged is shown to (same seed and iterations, same cost):
//   nice -n 10 node --import tsx bench/routing/throughput.ts --compare-with /tmp/opt-base/shared/routing \
//     [--visits 100] [--seeds 1,2] [--iterations 30000] [--rounds 3]
// or, on named benchmark instances (gh1000 or solomon; solver seed 1, DIMACS distances, distance objective):
//     --set gh1000 --only r2_10_4,c1_10_3 [--iterations 30000] [--rounds 3]
// The two builds take turns in one process (round by round, the order alternating), so a busy machine weighs on
// both alike; each solve is timed on the process's CPU clock (user + system). Prints per run the CPU-s, the
// iterations per CPU-second and the cost, and per build the median rate; `same plans` says whether every pair of
// runs of one seed ended at the same cost to the last digit.
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { checkSolution } from "#shared/routing/check";
import { solveRouting } from "#shared/routing/solver";
import { realisticDay } from "./early-stop.ts";
import { type Solve, solveForIterations } from "../support/cpu-clock-solve.ts";
import type { RoutingObjective, RoutingProblem } from "#shared/routing/model";
import { benchmarkProblems, costOf } from "./run.ts";

const { values } = parseArgs({
  options: {
    "compare-with": { type: "string" },
    visits: { type: "string", default: "100" },
    seeds: { type: "string", default: "1,2" },
    iterations: { type: "string", default: "30000" },
    rounds: { type: "string", default: "3" },
    set: { type: "string", default: "realistic" },
    only: { type: "string" },
  },
});
const set = values.set as "realistic" | "gh1000" | "solomon";
const visits = Number(values.visits);
const seeds = values.seeds!.split(",").map(Number);
/** The problems solved in turn: realistic days by seed, or benchmark instances (solver seed 1). */
const problems: { name: string; problem: RoutingProblem; seed: number }[] =
  set === "realistic"
    ? seeds.map((seed) => ({ name: `${seed}`, problem: realisticDay(visits, seed), seed }))
    : namedInstances(set, (values.only ?? "").split(",").filter(Boolean));
const objective: RoutingObjective = set === "realistic" ? "hierarchical" : "distance";

/** Benchmark instances by name, in the DIMACS convention (the one gh1000 and solomon have references for). */
function namedInstances(set: "gh1000" | "solomon", only: string[]) {
  if (only.length === 0) throw new Error(`--set ${set} needs --only with the instance names`);
  return benchmarkProblems({ set, only, objective: "distance", convention: "dimacs" });
}
const iterations = Number(values.iterations);
const rounds = Number(values.rounds);

const builds: { name: string; solve: Solve }[] = [{ name: "new", solve: solveRouting }];
if (values["compare-with"]) {
  const dir = resolve(values["compare-with"]);
  const other = (await import(pathToFileURL(join(dir, "solver.ts")).href)) as { solveRouting: Solve };
  builds.push({ name: "other", solve: other.solveRouting });
}

const rates = new Map<string, number[]>(builds.map((b) => [b.name, []]));
const costs = new Map<string, Set<number>>();
/** Per round and seed, new's rate over other's: the two ran back to back, so a busy machine weighs on both alike. */
const ratios: number[] = [];
// One short solve per build first, so that neither build's first timed run pays for compiling it.
for (const build of builds)
  build.solve(problems[0]!.problem, { seed: 1, maxIterations: 2000, earlyStop: false, timeLimitMs: 1e9, objective });
for (let round = 0; round < rounds; round++) {
  for (const { name, problem, seed } of problems) {
    const order = round % 2 === 0 ? builds : [...builds].reverse();
    const pair = new Map<string, number>();
    for (const build of order) {
      const { solution, cpuSeconds } = solveForIterations(problem, seed, iterations, build.solve, objective);
      const violations = checkSolution(problem, solution).violations.length;
      const rate = solution.iterations / cpuSeconds;
      rates.get(build.name)!.push(rate);
      pair.set(build.name, rate);
      const key = name;
      if (!costs.has(key)) costs.set(key, new Set());
      costs.get(key)!.add(costOf(solution));
      console.log(
        `round ${round + 1} ${set === "realistic" ? `seed ${name}` : name} ${build.name.padEnd(5)} ${cpuSeconds.toFixed(2)} CPU-s ${Math.round(rate)} it/CPU-s ` +
          `cost ${costOf(solution).toFixed(3)} vehicles ${solution.totals.vehicles} violations ${violations}`,
      );
    }
    if (pair.size === 2) ratios.push(pair.get("new")! / pair.get("other")!);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, xs] of rates) {
  console.log(
    `${name}: median ${Math.round(median(xs))}, best ${Math.round(Math.max(...xs))} iterations per CPU-second over ${xs.length} runs`,
  );
}
if (ratios.length > 0) {
  const sorted = [...ratios].sort((a, b) => a - b);
  console.log(`new / other, paired: median ${median(ratios).toFixed(3)} (${sorted.map((r) => r.toFixed(2)).join(", ")})`);
}
console.log(`same plans: ${[...costs.values()].every((set) => set.size === 1)}`);
