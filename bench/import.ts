// npm run bench:import [-- --records 10000 --throttle 0.05]
//
// A legacy import (docs/architecture.md, "Imports") under production DynamoDB semantics: DynamoDB
// Local behind the semantics proxy (local/dynamodb-semantics.ts: transaction conflicts with a 10 ms
// hold, `--throttle` of calls throttled), the real import service and record store, the export held
// in memory and the step queue run inline. Prints whether it finished without a rollback, the time,
// the transactions and how many met a conflict or a throttle, and the adaptive write limit's range.
// DynamoDB Local shares this machine's cores with the bench: times are far slower than on AWS.
import { parseArgs } from "node:util";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { startDynamoDbLocal } from "#local/emulators";
import { EXPORT_CONTENT_TYPE } from "#shared/domain/data-types/legacy-import";
import { provisionTable } from "#local/provision";
import { startDynamoDbSemanticsProxy, strictSemanticsOptions } from "#local/dynamodb-semantics";

const { values } = parseArgs({ options: { records: { type: "string", default: "10000" }, throttle: { type: "string", default: "0.05" } } });
const recordCount = Number(values.records);
const throttleRate = Number(values.throttle);
if (!Number.isInteger(recordCount) || recordCount < 1 || !(throttleRate >= 0 && throttleRate < 1))
  throw new Error("usage: --records <n ≥ 1> --throttle <0 ≤ rate < 1>");

const dynamo = process.env.BENCH_DYNAMODB_ENDPOINT
  ? { endpoint: process.env.BENCH_DYNAMODB_ENDPOINT, stop: async () => undefined }
  : await startDynamoDbLocal();
Object.assign(process.env, {
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "local",
  AWS_SECRET_ACCESS_KEY: "local",
  AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
  LOG_LEVEL: "silent",
  TABLE_NAME: `bench-import-${Date.now()}`,
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
});
await provisionTable(new DynamoDBClient({}), process.env.TABLE_NAME as string);
const proxy = await startDynamoDbSemanticsProxy(dynamo.endpoint, {
  ...strictSemanticsOptions,
  throttleRate,
  throttleError: "ThrottlingException",
});
process.env.AWS_ENDPOINT_URL_DYNAMODB = proxy.endpoint;

// Imported after the environment is set: the clients read their endpoints when first created.
const { createLegacyImportService } = await import("#shared/domain/data-types/import-service");
const { recordService } = await import("#shared/app/records");
const { dynamoDataTypeStore } = await import("#shared/store/data-type-store");
const { dynamoImportStateStore } = await import("#shared/store/import-state-store");
type StepMessage = Parameters<ReturnType<typeof createLegacyImportService>["runStep"]>[0];

const header = {
  format: "field-operations-export",
  formatVersion: 2,
  dataType: {
    name: "Bench import",
    fields: [
      { id: "dataId", title: "Code", type: "primaryKey", required: true, unique: true, searchable: true, primaryKey: true },
      { id: "label", title: "Label", type: "string", required: true, searchable: true },
      { id: "weight", title: "Weight", type: "number", required: false, validations: { min: 0 } },
    ],
    commonData: true,
  },
  recordCount,
};
const lines = [JSON.stringify(header)];
for (let i = 1; i <= recordCount; i++)
  lines.push(JSON.stringify({ dataId: `SKU-${String(i).padStart(6, "0")}`, values: { label: `Item ${i}`, weight: i % 50 } }));
const exportBytes = Buffer.from(`${lines.join("\n")}\n`);

const queue: StepMessage[] = [];
const service = createLegacyImportService({
  dataTypes: dynamoDataTypeStore,
  imports: dynamoImportStateStore,
  source: {
    uploadTarget: async () => ({ url: "memory://export", fields: {}, expiresInSeconds: 900 }),
    describe: async () => ({ sizeBytes: exportBytes.length, contentType: EXPORT_CONTENT_TYPE }),
    read: async (_organizationId, _uploadId, range) => ({
      bytes: exportBytes.subarray(range.offset, range.offset + range.length),
      sizeBytes: exportBytes.length,
    }),
    remove: async () => undefined,
  },
  queue: { send: async (message) => void queue.push(message) },
  records: recordService,
});

const organizationId = `bench-${Date.now()}`;
const startedAt = Date.now();
const started = await service.start(
  { userId: "bench", organizationId, hubIds: [], permissions: new Set(), permissionDetails: [] },
  { mode: "copy", source: { uploadId: "0".repeat(24) } },
);
let outcomes: Record<string, number> = {};
let stepFailures = 0;
let rolledBack = false;
for (let message = queue.shift(); message; message = queue.shift()) {
  try {
    const outcome = await service.runStep(message, { receiveCount: 1, maxReceiveCount: 5 });
    outcomes = { ...outcomes, [outcome]: (outcomes[outcome] ?? 0) + 1 };
  } catch (error) {
    // What SQS does with a step that threw: deliver it again.
    stepFailures += 1;
    console.error(`step ${message.step} threw (${(error as Error).name}: ${(error as Error).message}); redelivering`);
    queue.unshift(message);
  }
  const state = (await dynamoImportStateStore.find(organizationId, started._id))?.dataType.import;
  if (state?.phase === "rollingBack") rolledBack = true;
  if (state?.phase === "done" || state?.phase === "failed") break;
}
const seconds = (Date.now() - startedAt) / 1000;
const final = (await dynamoImportStateStore.find(organizationId, started._id))?.dataType.import;
const counters = proxy.counters();
console.log(
  JSON.stringify(
    {
      records: recordCount,
      throttleRate,
      phase: final?.phase,
      processed: final?.processed,
      rolledBack,
      errors: final?.errors?.length ?? 0,
      stepsRedelivered: stepFailures,
      seconds,
      recordsPerSecond: Math.round(recordCount / seconds),
      transactions: counters.transactions,
      transactionConflicts: counters.transactionConflicts,
      throttledCalls: counters.throttledCalls,
      writeLimit: service.writeLimitStats(),
      note: "DynamoDB Local and the bench share a busy 2-core machine: times are far slower than AWS",
    },
    null,
    2,
  ),
);
await proxy.stop();
await dynamo.stop();
process.exit(final?.phase === "done" && !rolledBack ? 0 : 1);
