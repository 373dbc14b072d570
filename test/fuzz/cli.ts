import { parseArgs } from "node:util";
import { startLocalStack } from "#local/stack";
import { generateSigningKey } from "#local/tokens";
import { fuzzRouteTable } from "./harness.ts";
import { formatSummary } from "./route-fuzzer.ts";

/**
 * `npm run fuzz [-- --runs N] [--seed S] [--route operationId]…`: starts the local stack in memory
 * (DynamoDB Local, s3rver, local SQS, the local gateway; no scheduler), runs the route-table fuzzer
 * and prints the summary. Exit code 1 when any check failed. The same property runs in
 * `npm test` (test/http/route-fuzz-*.test.ts) with a fixed seed and fewer runs.
 */
const usage = `usage: npm run fuzz -- [--runs N] [--seed S] [--route operationId]... [--verbose]
  --runs N        requests in total, spread over the routes (default 5000)
  --seed S        fast-check seed (default: random; printed so a run can be replayed)
  --route ID      fuzz only this operationId (repeatable)
  --verbose       keep the handlers' error logs (LOG_LEVEL=error) on stdout`;

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "5000" },
    seed: { type: "string" },
    route: { type: "string", multiple: true },
    verbose: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
  allowPositionals: false,
});
if (values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
const runs = Number(values.runs);
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed)) {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}
process.env.LOG_LEVEL = values.verbose ? "error" : "silent";

const signingKey = generateSigningKey();
const stack = await startLocalStack({ port: 0, inMemory: true, stateDirectory: "", signingKey, runScheduler: false });
let exitCode = 0;
try {
  process.stderr.write(`fuzzing ${stack.baseUrl} with seed ${seed}, ${runs} requests\n`);
  let lastReport = Date.now();
  const summary = await fuzzRouteTable({
    baseUrl: stack.baseUrl,
    signingKey,
    seed,
    runs,
    only: values.route,
    onProgress: (done, total) => {
      if (Date.now() - lastReport < 5000) return;
      lastReport = Date.now();
      process.stderr.write(`  ${done}/${total}\n`);
    },
  });
  process.stdout.write(`${formatSummary(summary)}\n`);
  exitCode = summary.failures.length > 0 ? 1 : 0;
} catch (error) {
  process.stderr.write(`fuzz run failed: ${(error as Error).stack ?? String(error)}\n`);
  exitCode = 2;
} finally {
  await stack.stop();
}
process.exit(exitCode);
