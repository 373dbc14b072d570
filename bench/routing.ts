// npm run bench:routing -- --set solomon|gh200|gh400|gh1000|realistic --seconds N --objective distance|hierarchical --seed N
// [--only C101,R101] [--iterations N]. Single-threaded; run one benchmark at a time for honest timings.
import { parseArgs } from "node:util";
import type { RoutingObjective } from "#shared/routing/model";
import { runRealistic } from "./routing/realistic.ts";
import { runBenchmark, VRPTW_DATA_DIR, type BenchmarkSet } from "./routing/run.ts";

const { values } = parseArgs({
  options: {
    set: { type: "string", default: "solomon" },
    seconds: { type: "string", default: "5" },
    objective: { type: "string", default: "distance" },
    seed: { type: "string", default: "1" },
    only: { type: "string" },
    iterations: { type: "string" },
  },
});

const sets = ["solomon", "gh200", "gh400", "gh1000", "realistic"];
if (!sets.includes(values.set)) throw new Error(`--set must be one of ${sets.join(", ")}`);
if (values.objective !== "distance" && values.objective !== "hierarchical") throw new Error("--objective must be distance or hierarchical");
const options = {
  seconds: Number(values.seconds),
  objective: values.objective as RoutingObjective,
  seed: Number(values.seed),
  maxIterations: values.iterations ? Number(values.iterations) : undefined,
  log: (line: string) => console.log(line),
};
if (values.set === "realistic") {
  runRealistic(options);
} else {
  runBenchmark({
    ...options,
    set: values.set as BenchmarkSet,
    dataDir: VRPTW_DATA_DIR,
    only: values.only?.split(","),
  });
}
