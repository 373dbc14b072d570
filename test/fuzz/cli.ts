import { parseArgs } from "node:util";
import { type DynamoDbSemanticsOptions, strictSemanticsOptions } from "#local/dynamodb-semantics";
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
const usage = `usage: npm run fuzz -- [--runs N] [--seed S] [--route operationId]... [--strict [--throttle-rate R] [--index-lag-ms N]] [--verbose]
  --runs N          requests in total, spread over the routes (default 5000)
  --seed S          fast-check seed (default: random; printed so a run can be replayed)
  --route ID        fuzz only this operationId (repeatable)
  --strict          production DynamoDB semantics in front of DynamoDB Local (local/dynamodb-semantics.ts):
                    transaction conflicts (10 ms hold, as the strict test project), throttles and index lag
  --throttle-rate R with --strict: share of DynamoDB calls throttled, 0-1 (default 0.02; the SDK retries)
  --index-lag-ms N  with --strict: writes reach the global secondary indexes N ms late (default 100)
  --verbose         keep the handlers' error logs (LOG_LEVEL=error) on stdout`;

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "5000" },
    seed: { type: "string" },
    route: { type: "string", multiple: true },
    strict: { type: "boolean", default: false },
    "throttle-rate": { type: "string", default: "0.02" },
    "index-lag-ms": { type: "string", default: "100" },
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
const throttleRate = Number(values["throttle-rate"]);
const indexLag = Number(values["index-lag-ms"]);
if (
  !Number.isInteger(runs) ||
  runs < 1 ||
  !Number.isInteger(seed) ||
  !(throttleRate >= 0 && throttleRate <= 1) ||
  !(Number.isFinite(indexLag) && indexLag >= 0)
) {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}
// The throttling draws take the fuzz seed, so a strict run replays with the same --seed.
const dynamodbSemantics: Partial<DynamoDbSemanticsOptions> | undefined = values.strict
  ? { ...strictSemanticsOptions, throttleRate, indexLag, throttleError: "ThrottlingException", seed }
  : undefined;
process.env.LOG_LEVEL = values.verbose ? "error" : "silent";

const signingKey = generateSigningKey();
const stack = await startLocalStack({ port: 0, inMemory: true, stateDirectory: "", signingKey, runScheduler: false, dynamodbSemantics });
let exitCode = 0;
try {
  const mode = dynamodbSemantics
    ? `strict DynamoDB semantics (throttle rate ${throttleRate}, index lag ${indexLag} ms)`
    : "DynamoDB Local as it is";
  process.stderr.write(`fuzzing ${stack.baseUrl} with seed ${seed}, ${runs} requests, ${mode}\n`);
  const started = Date.now();
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
  const model = stack.dynamodbSemantics?.counters();
  if (model)
    process.stdout.write(
      `strict model: ${model.transactionConflicts + model.singleWriteConflicts} conflicts, ${model.throttledCalls + model.throttledBatchItems} throttles\n`,
    );
  process.stdout.write(`wall time ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  exitCode = summary.failures.length > 0 ? 1 : 0;
} catch (error) {
  process.stderr.write(`fuzz run failed: ${(error as Error).stack ?? String(error)}\n`);
  exitCode = 2;
} finally {
  await stack.stop();
}
process.exit(exitCode);
