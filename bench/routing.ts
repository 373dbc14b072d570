// npm run bench:routing -- --set solomon|gh200|gh400|gh1000|realistic|small|reoptimize --seconds N --objective distance|hierarchical --seed N
// [--clock wall|cpu (the solver's budget on the wall clock or this process's CPU time; every set)]
// [--visits N (realistic: one day of N visits per seed, early stop against the full budget) --seeds 1,2,3 --streams K (early runs per day)
//  --full-results FILE (reuse full-budget runs kept there) --full-seconds N (the full run's budget, default --seconds)]
// [--convention exact|dimacs] [--only C101,R101] [--iterations N] [--no-early-stop (realistic, small)] [--early-stop (solomon, gh*:
// their default is the whole budget)] [--seeds 1,2,3 (small)]
// [--threads 1,2 (solomon, gh*: each instance per thread count at equal wall time, side by side)].
// [--compare-with DIR (realistic with --visits, or solomon: paired against the solver in DIR, a copy of shared/routing from another
//  build; --streams K runs per problem, per-problem CV; fixed budget unless --early-stop)]
// [--jobs N (solomon, gh*: N instances at a time, each single-threaded in its own process; needs N idle cores)].
// [--seeds 1,2,3 (reoptimize: a 600-visit day driven to midday and re-planned, per seed; --seconds each solve)]
// [--visits N --seeds 1,2,3 (feature: the realistic day with one route-planner feature each — pairs, overloaded, maxVisits,
//  away, asymmetric: bench/routing/features.ts — each checked; with --compare-with, paired, served weight first)]
// [--write-references FILE --runs K (realistic with --visits: per day the best of K runs at --seconds CPU-s, pooled into FILE:
//  bench/routing/references.ts) --references FILE (with --compare-with on realistic days: every run scored against them)]
// Single-threaded unless --threads; run one benchmark at a time for honest timings.
import { parseArgs } from "node:util";
import type { RoutingObjective } from "#shared/routing/model";
import { runComparison } from "./routing/compare.ts";
import { runEarlyStop } from "./routing/early-stop.ts";
import { runFeatures } from "./routing/features.ts";
import { runReferences } from "./routing/references.ts";
import { runRealistic } from "./routing/realistic.ts";
import { runReoptimize } from "./routing/reoptimize.ts";
import { runSmall } from "./routing/small.ts";
import { runThreadComparison } from "./routing/threads.ts";
import { runBenchmark, runBenchmarkInJobs, VRPTW_DATA_DIR, type BenchmarkSet } from "./routing/run.ts";

const { values } = parseArgs({
  options: {
    set: { type: "string", default: "solomon" },
    seconds: { type: "string", default: "5" },
    objective: { type: "string", default: "distance" },
    seed: { type: "string", default: "1" },
    only: { type: "string" },
    iterations: { type: "string" },
    convention: { type: "string", default: "exact" },
    "no-early-stop": { type: "boolean", default: false },
    "early-stop": { type: "boolean", default: false },
    seeds: { type: "string", default: "1,2,3" },
    streams: { type: "string", default: "1" },
    threads: { type: "string" },
    jobs: { type: "string", default: "1" },
    visits: { type: "string" },
    clock: { type: "string", default: "wall" },
    "full-results": { type: "string" },
    "full-seconds": { type: "string" },
    "compare-with": { type: "string" },
    references: { type: "string" },
    "write-references": { type: "string" },
    runs: { type: "string", default: "10" },
  },
});

const sets = ["solomon", "gh200", "gh400", "gh1000", "realistic", "feature", "small", "reoptimize"];
if (!sets.includes(values.set)) throw new Error(`--set must be one of ${sets.join(", ")}`);
if (values.clock !== "wall" && values.clock !== "cpu") throw new Error("--clock must be wall or cpu");
if (values.objective !== "distance" && values.objective !== "hierarchical") throw new Error("--objective must be distance or hierarchical");
if (values.convention !== "exact" && values.convention !== "dimacs") throw new Error("--convention must be exact or dimacs");
const options = {
  seconds: Number(values.seconds),
  objective: values.objective as RoutingObjective,
  seed: Number(values.seed),
  maxIterations: values.iterations ? Number(values.iterations) : undefined,
  // Budget benchmarks (Solomon, Gehring–Homberger) measure quality at a fixed budget: the whole budget unless --early-stop.
  earlyStop: ["solomon", "gh200", "gh400", "gh1000"].includes(values.set) ? values["early-stop"] : !values["no-early-stop"],
  clock: values.clock as "wall" | "cpu",
  log: (line: string) => console.log(line),
};
const threadCounts = values.threads?.split(",").map(Number);
if (threadCounts && !threadCounts.every((n) => Number.isInteger(n) && n >= 1)) throw new Error("--threads takes thread counts, e.g. 1,2");
if (threadCounts && (values.set === "realistic" || values.set === "feature" || values.set === "small"))
  throw new Error("--threads compares thread counts on solomon, gh200, gh400 or gh1000");
if (values.set === "feature" && !values.visits) throw new Error("--set feature needs --visits");
if (values["compare-with"]) {
  if (values.set !== "realistic" && values.set !== "feature" && values.set !== "solomon")
    throw new Error("--compare-with compares on realistic days, feature days or solomon");
  if (values.set === "realistic" && !values.visits) throw new Error("--compare-with on realistic days needs --visits");
  await runComparison({
    compareWith: values["compare-with"],
    set: values.set,
    visits: Number(values.visits ?? 0),
    seeds: values.seeds.split(",").map(Number),
    only: values.only?.split(","),
    streams: Number(values.streams),
    seconds: options.seconds,
    objective: options.objective,
    earlyStop: values["early-stop"],
    maxIterations: options.maxIterations,
    references: values.references,
    log: options.log,
  });
} else if (threadCounts) {
  await runThreadComparison({
    ...options,
    set: values.set as BenchmarkSet,
    convention: values.convention,
    dataDir: VRPTW_DATA_DIR,
    only: values.only?.split(","),
    threadCounts,
  });
} else if (values["write-references"]) {
  if (values.set !== "realistic" || !values.visits)
    throw new Error("--write-references writes reference plans of realistic days: --set realistic --visits N");
  runReferences({
    file: values["write-references"],
    visits: Number(values.visits),
    seeds: values.seeds.split(",").map(Number),
    runs: Number(values.runs),
    seconds: options.seconds,
    objective: options.objective,
    log: options.log,
  });
} else if (values.set === "realistic" && values.visits) {
  runEarlyStop({
    ...options,
    visits: Number(values.visits),
    seeds: values.seeds.split(",").map(Number),
    streams: Number(values.streams),
    clock: values.clock,
    fullResults: values["full-results"],
    ...(values["full-seconds"] ? { fullSeconds: Number(values["full-seconds"]) } : {}),
  });
} else if (values.set === "realistic") {
  runRealistic(options);
} else if (values.set === "feature") {
  runFeatures({ ...options, visits: Number(values.visits), seeds: values.seeds.split(",").map(Number) });
} else if (values.set === "reoptimize") {
  runReoptimize({ seconds: options.seconds, objective: options.objective, seeds: values.seeds.split(",").map(Number), log: options.log });
} else if (values.set === "small") {
  runSmall({ ...options, seeds: values.seeds.split(",").map(Number), only: values.only?.split(",") });
} else {
  const jobs = Number(values.jobs);
  if (!Number.isInteger(jobs) || jobs < 1) throw new Error("--jobs takes a number of processes, e.g. 2");
  const benchmark = {
    ...options,
    set: values.set as BenchmarkSet,
    convention: values.convention as "exact" | "dimacs",
    dataDir: VRPTW_DATA_DIR,
    only: values.only?.split(","),
  };
  if (jobs === 1) runBenchmark(benchmark);
  else await runBenchmarkInJobs(benchmark, jobs);
}
