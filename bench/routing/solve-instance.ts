// Child process of `npm run bench:routing -- --jobs N` (run.ts, runBenchmarkInJobs): solves one
// instance file with the options given as JSON and sends its scored result to the parent.
import { type BenchmarkOptions, solveInstance } from "./run.ts";

const [optionsJson, file] = process.argv.slice(2);
if (!optionsJson || !file || !process.send) throw new Error("usage: forked by runBenchmarkInJobs with options JSON and an instance file");
const result = solveInstance(JSON.parse(optionsJson) as BenchmarkOptions, file);
process.send(result, () => process.exit(0));
