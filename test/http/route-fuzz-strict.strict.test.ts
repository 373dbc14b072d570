import { describeRouteFuzz } from "#test/fuzz/route-fuzz-suite";
import { strictDynamoDb } from "#test/support/strict-dynamodb";

/**
 * The route-table fuzzer under production DynamoDB semantics (the strict project: transaction
 * conflicts with a 10 ms hold, plus throttles and index lag here), with its own seed and few
 * requests over the whole table: `npm run fuzz -- --strict` runs the same longer (docs/operations.md,
 * "Fuzzing under production semantics"). The throttles make the model act in every run.
 */
describeRouteFuzz(0, 1, {
  title: "strict DynamoDB semantics",
  seed: 20_261_127,
  runs: Number(process.env.FUZZ_STRICT_RUNS ?? 280),
  successShare: 0.5,
  beforeRun: () => strictDynamoDb().configure({ throttleRate: 0.03, indexLag: 100, throttleError: "ThrottlingException" }),
});
