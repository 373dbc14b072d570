// npm run bench:writes [-- --import-records 200] [-- --json]
//
// What each write route costs in DynamoDB capacity, computed from the requests the functions
// actually send: the local stack runs with the semantics proxy capturing every call and the item
// images around it (local/dynamodb-semantics.ts; conflicts and throttling off, so each call is
// sent once), and local/dynamodb-capacity.ts turns them into write and read units by the developer
// guide's rules (1 WRU per KB for a plain write, 2 per KB for a transactional item, a
// ConditionCheck included; one write per global secondary index entry written, a delete plus a
// put when an update moves an index key; reads by 4 KB, halved when eventually consistent).
// Each route is called once on a fresh organization's data after a warm-up call (the authorizer's
// tenant read is cached, as API Gateway caches it), and an import of `--import-records` records
// (copy mode) is run through the import worker and reported per record. The targets of the
// write path are checked at the end. docs/performance.md, "Write costs", holds the table.
import { parseArgs } from "node:util";
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { SQSEvent } from "aws-lambda";
import type { CostSummary } from "#local/dynamodb-capacity";
import type { CapturedCall } from "#local/dynamodb-semantics";
import { postExport } from "#test/support/export-upload";

// The handlers' logger reads its level when their modules load: quiet before importing them.
process.env.LOG_LEVEL ??= "silent";
await import("#local/process-defaults");
const { summarize, costOf, itemSize } = await import("#local/dynamodb-capacity");

const { values } = parseArgs({
  options: { "import-records": { type: "string", default: "200" }, json: { type: "boolean", default: false } },
});
const importRecords = Number(values["import-records"]);
if (!Number.isInteger(importRecords) || importRecords < 1 || importRecords > 20_000) throw new Error("usage: --import-records <1..20000>");

const { captureStack } = await import("./support/capture-stack.ts");
const { stack, semantics, indexes, call } = await captureStack();
type Answer = Awaited<ReturnType<typeof call>>;

interface Row {
  route: string;
  scenario: string;
  status: number;
  cost: CostSummary;
  calls: CapturedCall[];
}
const rows: Row[] = [];

/** Calls one route and records what DynamoDB calls it made (and nothing else). */
async function measure(route: string, scenario: string, method: string, path: string, body?: unknown): Promise<Answer> {
  semantics.takeCaptured();
  const answer = await call(method, path, body);
  const calls = semantics.takeCaptured();
  rows.push({ route, scenario, status: answer.status, cost: summarize(calls, indexes), calls });
  return answer;
}
const idOf = (answer: Answer): string => answer.body?.data?._id ?? answer.body?.data_type?._id;

// Warm-up: the tenant is enrolled and the authorizer's answer cached before anything is measured.
await call("GET", "/vehicles");

const hub = { name: "Depot", address: "Jl. Sudirman 1, Jakarta", lat: -6.2, lng: 106.8 };
const hubId = idOf(await measure("POST /hub", "hub", "POST", "/hub", hub));
await measure("PUT /hub/{hubId}", "same hub, new name", "PUT", `/hub/${hubId}`, { ...hub, name: "Depot 2" });
await measure("PATCH /hub/{hubId}", "name", "PATCH", `/hub/${hubId}`, { name: "Depot 3" });

const titleType = { name: "Note", fields: [{ type: "title", title: "Name" }] };
const titleTypeId = idOf(await measure("POST /data-type", "title only", "POST", "/data-type", titleType));
const searchType = {
  name: "Customer",
  fields: [
    { type: "title", title: "Name" },
    { id: "code", title: "Code", type: "text", required: false, unique: true },
    { id: "notes", title: "Notes", type: "text", required: false, searchable: true },
  ],
};
const searchTypeId = idOf(await measure("POST /data-type", "title, 1 unique, 1 searchable", "POST", "/data-type", searchType));
await measure("PATCH /data-type/{dataTypeId}", "limitUser", "PATCH", `/data-type/${searchTypeId}`, { limitUser: false });

// The targets' two records: a title-only type's (1 search token: its one-word title), and one
// unique value plus 8 search tokens (2 title words and 6 words of the searchable field).
await measure("POST /data", "TARGET title-only type (1 token)", "POST", "/data", { dataTypeId: titleTypeId, hubId, dataId: "Acme" });
const searchRecord = { dataTypeId: searchTypeId, hubId, dataId: "Acme Trading", code: "C-001", notes: "north south east west red blue" };
await measure("POST /data", "TARGET 1 unique + 8 tokens", "POST", "/data", searchRecord);
const recordPath = `/data/type/${encodeURIComponent("Customer")}/${encodeURIComponent("Acme Trading")}`;
await measure("PUT /data/type/{name}/{dataId}", "same values but one notes word", "PUT", recordPath, {
  ...searchRecord,
  notes: "north south east west red green",
});
await measure("PATCH /data/type/{name}/{dataId}", "unique value changed", "PATCH", recordPath, { code: "C-002" });
await measure("DELETE /data/type/{name}/{dataId}", "1 unique + 8 tokens", "DELETE", recordPath);
await measure("DELETE /data/type/{name}/{dataId}", "title-only type", "DELETE", `/data/type/Note/Acme`);

const vehicle = {
  name: "Van",
  type: "truck",
  capacity: { weight: { min: 10, max: 500 } },
  workingTime: { startTime: "07:00", endTime: "16:00", multiday: 0 },
};
const vehicleId = idOf(await measure("POST /vehicle", "in a hub", "POST", "/vehicle", { ...vehicle, hubId }));
await measure("PUT /vehicle/{vehicleId}", "same hub", "PUT", `/vehicle/${vehicleId}`, { ...vehicle, name: "Van 2", hubId });
await measure("PATCH /vehicle/{vehicleId}", "name", "PATCH", `/vehicle/${vehicleId}`, { name: "Van 3" });
// The two reads with a target of their own (≤ 1 RRU: the entity and the extension guard, both eventually consistent).
await measure("GET /hub/{hubId}", "TARGET read", "GET", `/hub/${hubId}`);
await measure("GET /vehicle/{vehicleId}", "TARGET read", "GET", `/vehicle/${vehicleId}`);

const visitId = idOf(
  await measure("POST /visit", "in a hub", "POST", "/visit", { hubId, name: "Stop", coordinate: { lat: 1.5, lng: 2.5 } }),
);
await measure("PATCH /visit/{visitId}", "name", "PATCH", `/visit/${visitId}`, { name: "Stop 2" });

const configurationId = idOf(
  await measure("POST /routing/configuration", "on a hub", "POST", "/routing/configuration", { name: "Plan", hubId }),
);
await measure("PATCH /routing/configuration/{configurationId}", "name", "PATCH", `/routing/configuration/${configurationId}`, {
  name: "Plan 2",
});
const schedule = {
  name: "Morning routing",
  configurationId,
  periode: "weekly",
  schedules: [{ day: "monday", time: ["07:00"] }],
  startTime: "2026-01-01 00:00",
  endTime: "2030-12-31 23:59",
  autoDispatch: true,
};
const scheduleId = idOf(await measure("POST /routing/schedule", "weekly", "POST", "/routing/schedule", schedule));
await measure("PATCH /routing/schedule/{scheduleId}", "name", "PATCH", `/routing/schedule/${scheduleId}`, { name: "Evening routing" });
await measure("DELETE /routing/schedule/{scheduleId}", "", "DELETE", `/routing/schedule/${scheduleId}`);
await measure("DELETE /routing/configuration/{configurationId}", "", "DELETE", `/routing/configuration/${configurationId}`);
await measure("DELETE /visit/{visitId}", "", "DELETE", `/visit/${visitId}`);
await measure("DELETE /vehicle/{vehicleId}", "", "DELETE", `/vehicle/${vehicleId}`);
await measure("DELETE /data-type/{dataTypeId}", "title only, no records", "DELETE", `/data-type/${titleTypeId}`);
await measure("DELETE /hub/{hubId}", "unused hub", "DELETE", `/hub/${hubId}`);

// ---- an import, through the import worker as the SQS event source feeds it ----
const importType = {
  name: "Legacy products",
  fields: [
    { id: "dataId", title: "Code", type: "primaryKey", required: true, unique: true, searchable: true, primaryKey: true },
    { id: "label", title: "Label", type: "string", required: true, searchable: true },
    { id: "weight", title: "Weight", type: "number", required: false, validations: { min: 0 } },
  ],
  commonData: true,
};
const lines = [JSON.stringify({ format: "field-operations-export", formatVersion: 2, dataType: importType, recordCount: importRecords })];
for (let i = 1; i <= importRecords; i++)
  lines.push(JSON.stringify({ dataId: `SKU-${String(i).padStart(5, "0")}`, values: { label: `Item ${i}`, weight: i % 50 } }));
const upload = await call("POST", "/data-type/import/upload");
await postExport(upload.body.data, `${lines.join("\n")}\n`);
semantics.takeCaptured();
const started = await call("POST", "/data-type/import", { mode: "copy", source: { uploadId: upload.body.data.uploadId } });
const importedTypeId = idOf(started);
const { handler: importWorker } = (await import("#functions/jobs/legacy-import")) as {
  handler: (event: SQSEvent) => Promise<{ batchItemFailures: Array<{ itemIdentifier: string }> }>;
};
const sqs = new SQSClient({});
const queueUrl = stack.environment.IMPORT_QUEUE_URL as string;
for (let idle = 0; idle < 3; ) {
  const received = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 1, AttributeNames: ["All"] }),
  );
  const messages = received.Messages ?? [];
  if (messages.length === 0) {
    idle += 1;
    continue;
  }
  idle = 0;
  const event = {
    Records: messages.map((message) => ({
      messageId: message.MessageId,
      receiptHandle: message.ReceiptHandle,
      body: message.Body,
      attributes: { ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? "1" },
      messageAttributes: {},
      md5OfBody: "",
      eventSource: "aws:sqs",
      eventSourceARN: "arn:aws:sqs:us-east-1:000000000000:import",
      awsRegion: "us-east-1",
    })),
  } as unknown as SQSEvent;
  const result = await importWorker(event);
  const failed = new Set(result.batchItemFailures.map((failure) => failure.itemIdentifier));
  for (const message of messages)
    if (!failed.has(message.MessageId as string))
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
}
const importCalls: CapturedCall[] = semantics.takeCaptured();
const importCost = summarize(importCalls, indexes);
const importState =
  (await call("GET", `/data-type/${importedTypeId}`)).body?.data_type?.import ??
  (await call("GET", `/data-type/${importedTypeId}`)).body?.data?.import;

await stack.stop();

// ---- report ----
const perRecord = (units: number) => Math.round((units / importRecords) * 100) / 100;
if (values.json) {
  const plain = rows.map(({ calls: _calls, ...row }) => row);
  process.stdout.write(
    `${JSON.stringify({ rows: plain, import: { records: importRecords, state: importState, cost: importCost } }, null, 2)}\n`,
  );
} else {
  const header = ["route", "scenario", "status", "DynamoDB calls", "WRU", "of which GSI", "RRU", "items written"];
  const table = rows.map((row) => [
    row.route,
    row.scenario,
    String(row.status),
    Object.entries(row.cost.operations)
      .map(([operation, count]) => `${count} ${operation}`)
      .join(", "),
    String(row.cost.writeUnits),
    String(row.cost.indexWriteUnits),
    String(row.cost.readUnits),
    String(row.cost.itemsWritten),
  ]);
  table.push([
    "import (copy), per record",
    `${importRecords} records, status ${importState?.status ?? "?"}`,
    "",
    `${importCost.calls} calls in all`,
    String(perRecord(importCost.writeUnits)),
    String(perRecord(importCost.indexWriteUnits)),
    String(perRecord(importCost.readUnits)),
    String(perRecord(importCost.itemsWritten)),
  ]);
  process.stdout.write(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|\n`);
  for (const line of table) process.stdout.write(`| ${line.join(" | ")} |\n`);
  const target = (scenario: string, limit: number) => {
    const row = rows.find((entry) => entry.scenario.startsWith(scenario));
    const units = row?.cost.writeUnits ?? Number.NaN;
    return `${scenario.replace("TARGET ", "")}: ${units} WRU (target ≤ ${limit}): ${units <= limit ? "MET" : `NOT MET, ${units - limit} over`}`;
  };
  process.stdout.write(
    `\nTargets (POST /data):\n  ${target("TARGET title-only type", 10)}\n  ${target("TARGET 1 unique + 8 tokens", 22)}\n`,
  );
  const readTarget = (route: string) => {
    const units = rows.find((entry) => entry.route === route)?.cost.readUnits ?? Number.NaN;
    return `${route}: ${units} RRU (target ≤ 1): ${units <= 1 ? "MET" : "NOT MET"}`;
  };
  process.stdout.write(`Targets (reads):\n  ${readTarget("GET /hub/{hubId}")}\n  ${readTarget("GET /vehicle/{vehicleId}")}\n`);
  // Where the targets' units go, item by item (sort keys cut at their first id).
  for (const row of rows.filter((entry) => entry.scenario.startsWith("TARGET") && entry.route.startsWith("POST"))) {
    process.stdout.write(`\n${row.scenario.replace("TARGET ", "")}:\n`);
    for (const captured of row.calls) {
      const cost = costOf(captured, indexes);
      if (cost.writeUnits === 0) continue;
      process.stdout.write(`  ${captured.operation} (${cost.writeUnits} WRU, ${cost.indexWriteUnits} of them GSI):\n`);
      for (const item of captured.items) {
        const image = item.after ?? item.before;
        const sortKey = String(item.key.SK?.S ?? image?.SK?.S ?? "").replace(/#[^#]{16,}.*$/, "#…");
        process.stdout.write(`    ${item.action.padEnd(14)} ${sortKey.padEnd(28)} ${String(itemSize(image)).padStart(5)} bytes\n`);
      }
    }
  }
  const failed = rows.filter((row) => row.status >= 300);
  if (failed.length > 0)
    process.stdout.write(`\nNot measured (the call failed): ${failed.map((row) => `${row.route} ${row.status}`).join("; ")}\n`);
}
process.exit(0);
