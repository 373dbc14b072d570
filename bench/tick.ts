// npm run bench:tick [-- --due 10 --sizes 100,1000,10000 --workers 20]
//
// Shows that the scheduler tick's cost follows the number of DUE schedules, not the number of
// schedules, and how long enqueueing them takes: for each size it fills a fresh table with that many
// non-due schedules plus `--due` due ones (5 per organization, so the per-organization cap on active
// runs is not what is measured), runs one tick at the due minute and — when the tick fanned out —
// hands its `duePage` jobs to the real run-worker handler in `--workers` parallel lanes (what the SQS
// event source does with up to runWorkerMaxConcurrency workers; default 20, the deployed default), until
// every page is handled. It prints the time until every due schedule was enqueued, per phase (the tick:
// due-index read + page sends; the pages), the DynamoDB calls, time and capacity units per command
// (ReturnConsumedCapacity TOTAL on every call: the due-index queries, the batch reads, the claims, the
// cap updates and the advances) and the SQS sends. Runs against
// DynamoDB Local and the local SQS emulator, started here (both share this machine's cores with the
// bench, so the times are far slower than DynamoDB and SQS in AWS).
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import type { ScheduledEvent, SQSEvent } from "aws-lambda";
import { startDynamoDbLocal, startSqsEmulator } from "#local/emulators";
import { provisionQueues, provisionTable } from "#local/provision";
import type { ScheduleRecord } from "#shared/domain/schedules/schema";
import { defaultRunWorkerMaxConcurrency } from "#shared/queue/definitions";

const { values } = parseArgs({
  options: {
    due: { type: "string", default: "10" },
    sizes: { type: "string", default: "100,1000,10000" },
    workers: { type: "string", default: String(defaultRunWorkerMaxConcurrency) },
  },
});
const dueCount = Number(values.due);
const sizes = values.sizes.split(",").map(Number);
const workerLanes = Number(values.workers);
if (!Number.isInteger(dueCount) || dueCount < 0 || sizes.some((size) => !Number.isInteger(size) || size < 0) || !(workerLanes >= 1)) {
  throw new Error("usage: --due <n ≥ 0> --sizes <n,n,…> --workers <n ≥ 1>");
}

// BENCH_DYNAMODB_ENDPOINT: a DynamoDB Local already running (on a loaded machine its start can take longer than the starter waits).
const dynamo = process.env.BENCH_DYNAMODB_ENDPOINT
  ? { endpoint: process.env.BENCH_DYNAMODB_ENDPOINT, stop: async () => undefined }
  : await startDynamoDbLocal();
const sqsEmulator = await startSqsEmulator();
Object.assign(process.env, {
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "local",
  AWS_SECRET_ACCESS_KEY: "local",
  AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
  AWS_ENDPOINT_URL_SQS: sqsEmulator.endpoint,
  APP_TIMEZONE: "UTC",
  LOG_LEVEL: "silent",
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
});
const queues = await provisionQueues(new SQSClient({}));
process.env.RUN_QUEUE_URL = queues.runQueueUrl;

// Imported after the environment is set: the clients read their endpoints when first created.
const { resetAppConfig } = await import("#shared/config/env");
const { documentClient, tableName } = await import("#shared/store/dynamo");
const { PutCommand } = await import("@aws-sdk/lib-dynamodb");
const { keys } = await import("#shared/store/keys");
const { sqsClient } = await import("#shared/queue/sqs");
const { dynamoScheduleStore, scheduleItem } = await import("#shared/store/schedule-store");
const { createScheduleService } = await import("#shared/domain/schedules/service");
const { handler: tick } = await import("#functions/jobs/scheduler-tick");
const { handler: runWorker } = await import("#functions/jobs/routing-run");
const sqs = new SQSClient({});

/** Every DynamoDB call made through the shared document client asks for, and reports, its consumed capacity. */
const consumed = {
  read: 0,
  write: 0,
  calls: 0,
  byCommand: new Map<string, { calls: number; units: number; ms: number }>(),
  failed: new Map<string, number>(),
};
documentClient().middlewareStack.add(
  (next, context) => async (args) => {
    (args.input as Record<string, unknown>).ReturnConsumedCapacity = "TOTAL";
    const startedAt = performance.now();
    let result: Awaited<ReturnType<typeof next>>;
    try {
      result = await next(args);
    } catch (error) {
      // A refused call (a failed condition, a missing map) is a call too: counted apart.
      const name = `${String(context.commandName).replace("Command", "")} (${(error as Error).name})`;
      consumed.failed.set(name, (consumed.failed.get(name) ?? 0) + 1);
      throw error;
    }
    const ms = performance.now() - startedAt;
    const output = result.output as { ConsumedCapacity?: unknown };
    const entries = ([] as Array<{ CapacityUnits?: number; ReadCapacityUnits?: number; WriteCapacityUnits?: number }>).concat(
      (output.ConsumedCapacity as never) ?? [],
    );
    const command = String(context.commandName);
    let units = 0;
    for (const entry of entries) {
      const isWrite = /Put|Update|Delete|Write/.test(command);
      const value = entry.CapacityUnits ?? (isWrite ? entry.WriteCapacityUnits : entry.ReadCapacityUnits) ?? 0;
      units += value;
      if (isWrite) consumed.write += value;
      else consumed.read += value;
    }
    consumed.calls++;
    const row = consumed.byCommand.get(command) ?? { calls: 0, units: 0, ms: 0 };
    consumed.byCommand.set(command, { calls: row.calls + 1, units: row.units + units, ms: row.ms + ms });
    return result;
  },
  { step: "initialize", name: "consumedCapacity" },
);
/** The shared SQS client's SendMessageBatch calls (run messages and pages), and how often each slot was handed to one. */
const sends = { calls: 0, ms: 0, slots: new Map<string, number>() };
sqsClient().middlewareStack.add(
  (next, context) => async (args) => {
    const startedAt = performance.now();
    const result = await next(args);
    if (context.commandName === "SendMessageBatchCommand") {
      sends.calls++;
      sends.ms += performance.now() - startedAt;
      for (const entry of (args.input as { Entries?: Array<{ MessageBody?: string }> }).Entries ?? []) {
        const body = JSON.parse(entry.MessageBody ?? "{}") as { kind?: string; scheduleId?: string; slot?: string };
        if (body.kind !== "schedule") continue;
        const slot = `${body.scheduleId}#${body.slot}`;
        sends.slots.set(slot, (sends.slots.get(slot) ?? 0) + 1);
      }
    }
    return result;
  },
  { step: "initialize", name: "sendTiming" },
);
/** Calls the SDK sent more than once (its retry of a throttled, failed or timed-out attempt), per client and command. */
const retried = new Map<string, number>();
/** Errors of single attempts (the retried ones included), by client, command and error. */
const attemptErrors = new Map<string, number>();
type LooseStack = {
  add(
    middleware: (
      next: (args: unknown) => Promise<{ output: unknown }>,
      context: { commandName?: string },
    ) => (args: unknown) => Promise<{ output: unknown }>,
    options: object,
  ): void;
};
for (const [clientName, client] of [
  ["DynamoDB", documentClient()],
  ["SQS", sqsClient()],
] as const) {
  (client.middlewareStack as unknown as LooseStack).add(
    (next, context) => async (args) => {
      const count = (metadata: { attempts?: number } | undefined, outcome: string) => {
        const attempts = metadata?.attempts ?? 1;
        if (attempts <= 1) return;
        const name = `${clientName} ${String(context.commandName).replace("Command", "")}${outcome}`;
        retried.set(name, (retried.get(name) ?? 0) + attempts - 1);
      };
      try {
        const result = await next(args);
        count((result.output as { $metadata?: { attempts?: number } }).$metadata, "");
        return result;
      } catch (error) {
        count((error as { $metadata?: { attempts?: number } }).$metadata, ` (then ${(error as Error).name})`);
        throw error;
      }
    },
    { step: "initialize", name: "retryCount" },
  );
  // Inside the SDK's retry loop: what made an attempt fail (and be retried).
  (client.middlewareStack as unknown as LooseStack).add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        const detail = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
        const name = `${clientName} ${String(context.commandName).replace("Command", "")}: ${detail.name ?? "Error"}${detail.code ? ` ${detail.code}` : ""}${detail.$metadata?.httpStatusCode ? ` ${detail.$metadata.httpStatusCode}` : ""}`;
        if (!/ConditionalCheckFailed/.test(name)) attemptErrors.set(name, (attemptErrors.get(name) ?? 0) + 1);
        throw error;
      }
    },
    { step: "deserialize", name: "attemptErrors" },
  );
}
/** Five schedules per organization: at most the default cap of active runs per organization. */
const ownerOf = (index: number) => ({
  userId: "bench",
  organizationId: `bench-org-${Math.floor(index / 5)}`,
  hubIds: [],
  permissions: new Set<string>(),
  permissionDetails: [],
});
/** The first 07:00 UTC after now: every schedule of the bench runs daily at 07:00. */
function nextSevenUtc(): string {
  const at = new Date();
  at.setUTCHours(7, 0, 0, 0);
  if (at.getTime() <= Date.now()) at.setUTCDate(at.getUTCDate() + 1);
  return at.toISOString();
}
const schedule = (name: string, startTime: string) => ({
  name,
  configurationId: "bench-profile",
  periode: "daily" as const,
  schedules: [{ time: ["07:00"] }],
  startTime,
  endTime: "2099-12-31 23:59",
  frequency: null,
  interval: null,
  autoDispatch: false,
  active: true,
});

async function inParallel<T>(count: number, lanes: number, work: (index: number) => Promise<T>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/**
 * What the SQS event source does with the run queue while the pages are handled: `workers` lanes
 * each receive a message, hand each `duePage` to the run-worker handler and delete it; a run message
 * a lane receives is kept aside (its body in `runBodies`) and left in flight — the bench measures
 * enqueueing, not planning. Answers the pages handled and when the first one started (ms after `started`).
 */
async function handOutPages(pages: number, started: number, runBodies: string[]): Promise<{ handled: number; firstStartedMs: number }> {
  let handled = 0;
  let firstStartedMs = Number.NaN;
  const queueUrl = process.env.RUN_QUEUE_URL as string;
  await Promise.all(
    Array.from({ length: pages > 0 ? workerLanes : 0 }, async () => {
      while (handled < pages) {
        const received = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: 1,
            VisibilityTimeout: 3600,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ["All"],
          }),
        );
        for (const message of received.Messages ?? []) {
          const body = JSON.parse(message.Body ?? "{}") as { kind?: string };
          if (body.kind !== "duePage") {
            runBodies.push(message.Body ?? "");
            continue;
          }
          if (Number.isNaN(firstStartedMs)) firstStartedMs = performance.now() - started;
          const event = {
            Records: [
              {
                messageId: message.MessageId,
                receiptHandle: message.ReceiptHandle,
                body: message.Body,
                attributes: message.Attributes ?? {},
              },
            ],
          } as unknown as SQSEvent;
          const response = await runWorker(event);
          if (response.batchItemFailures.length > 0) throw new Error("a due page failed");
          handled++;
          await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle as string }));
        }
      }
    }),
  );
  return { handled, firstStartedMs };
}

/**
 * Every run message now in the queue, counted one by one: the visible ones are received and deleted
 * (so the next size starts from an empty queue), plus those the lanes hold in flight. Not
 * GetQueueAttributes: the local emulator's ApproximateNumberOfMessages counts in-flight messages too,
 * so adding ApproximateNumberOfMessagesNotVisible counted every message a lane held twice — that was
 * the "36 slots sent twice" of the earlier figures.
 */
async function drainRunMessages(heldByLanes: string[]): Promise<{ messages: number; distinctSlots: number; slotsTwice: number }> {
  const queueUrl = process.env.RUN_QUEUE_URL as string;
  const bodies = [...heldByLanes];
  for (;;) {
    const received = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 3600, WaitTimeSeconds: 0 }),
    );
    const messages = received.Messages ?? [];
    if (messages.length === 0) break;
    bodies.push(...messages.map((message) => message.Body ?? ""));
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.map((message, i) => ({ Id: String(i), ReceiptHandle: message.ReceiptHandle as string })),
      }),
    );
  }
  const perSlot = new Map<string, number>();
  for (const body of bodies) {
    const run = JSON.parse(body) as { kind?: string; scheduleId?: string; slot?: string };
    if (run.kind !== "schedule") continue;
    perSlot.set(`${run.scheduleId}#${run.slot}`, (perSlot.get(`${run.scheduleId}#${run.slot}`) ?? 0) + 1);
  }
  return {
    messages: [...perSlot.values()].reduce((sum, n) => sum + n, 0),
    distinctSlots: perSlot.size,
    slotsTwice: [...perSlot.values()].filter((n) => n > 1).length,
  };
}

const rows: string[] = [];
try {
  for (const size of sizes) {
    const table = `bench-tick-${dueCount}-${size}-${Date.now()}`; // fresh even against a DynamoDB Local shared between runs
    await provisionTable(new DynamoDBClient({}), table);
    process.env.TABLE_NAME = table;
    resetAppConfig();
    // Neither the profile check nor the profile count is what is measured: the service is built without
    // the check, and its store writes each schedule item with one put (no counting transaction, whose
    // lock on one profile item times out in DynamoDB Local under load).
    const plainInsert = {
      ...dynamoScheduleStore,
      insert: async (record: ScheduleRecord) => {
        // What the store's insert writes (putNew), without the transaction.
        const Item = { ...scheduleItem(record), ...keys.schedule(record.organizationId, record._id), version: 1 };
        await documentClient().send(new PutCommand({ TableName: tableName(), Item }));
      },
    };
    const service = createScheduleService({
      store: plainInsert,
      hubConfigurations: { configurationIdsOfHub: async () => [] },
      timeZone: () => "UTC",
    });
    const setupStarted = performance.now();
    await inParallel(dueCount, 25, (k) => service.create(ownerOf(k), schedule(`due ${k}`, "2020-01-01 00:00")));
    // Non-due: the same timetable, but their window opens in 2098, so their next run is decades away.
    await inParallel(size, 25, (k) => service.create(ownerOf(k), schedule(`later ${k}`, "2098-01-01 00:00")));
    const dueAt = nextSevenUtc();
    process.stdout.write(
      `size ${size}: ${dueCount} due + ${size} later schedules stored in ${((performance.now() - setupStarted) / 1000).toFixed(0)} s\n`,
    );

    consumed.read = 0;
    consumed.write = 0;
    consumed.calls = 0;
    consumed.byCommand.clear();
    consumed.failed.clear();
    sends.calls = 0;
    sends.ms = 0;
    sends.slots.clear();
    retried.clear();
    attemptErrors.clear();
    const loadBefore = loadavg()[0] ?? 0;
    const started = performance.now();
    const outcome = await tick({ time: new Date(new Date(dueAt).getTime() + 20_000).toISOString() } as ScheduledEvent);
    const tickMs = performance.now() - started;
    const heldByLanes: string[] = [];
    const pages = await handOutPages(outcome.pages, started, heldByLanes);
    const allEnqueuedMs = performance.now() - started;
    const attributes = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: process.env.RUN_QUEUE_URL as string,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      }),
    );
    const attributeSum =
      Number(attributes.Attributes?.ApproximateNumberOfMessages ?? 0) +
      Number(attributes.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
    const queued = await drainRunMessages(heldByLanes);
    const enqueued = queued.messages;
    const byCommand = [...consumed.byCommand]
      .map(
        ([command, row]) =>
          `${command.replace("Command", "")} ${row.calls} calls, ${(row.ms / row.calls).toFixed(1)} ms each, ${row.units.toFixed(0)} units`,
      )
      .join("; ");
    rows.push(
      `| ${String(size).padStart(7)} | ${String(dueCount).padStart(6)} | ${String(enqueued).padStart(8)} | ${String(pages.handled).padStart(5)} | ${tickMs.toFixed(0).padStart(7)} | ${(outcome.pages > 0 ? (allEnqueuedMs - pages.firstStartedMs).toFixed(0) : "–").padStart(8)} | ${allEnqueuedMs.toFixed(0).padStart(12)} | ${consumed.read.toFixed(1).padStart(10)} | ${consumed.write.toFixed(1).padStart(11)} | ${String(consumed.calls).padStart(6)} | ${String(sends.calls).padStart(5)} |`,
    );
    process.stdout.write(
      `size ${size}: tick ${tickMs.toFixed(0)} ms (due-index read + ${outcome.pages} pages sent), pages ${outcome.pages > 0 ? (allEnqueuedMs - pages.firstStartedMs).toFixed(0) : 0} ms in ${workerLanes} lanes, all ${enqueued} enqueued after ${allEnqueuedMs.toFixed(0)} ms (${(enqueued / (allEnqueuedMs / 1000)).toFixed(0)}/s)\n` +
        `  DynamoDB: ${dueCount > 0 ? (consumed.calls / dueCount).toFixed(2) : "–"} answered calls per due schedule: ${byCommand}\n` +
        `  refused calls (not in the counts above): ${consumed.failed.size > 0 ? [...consumed.failed].map(([name, n]) => `${name} ${n}`).join(", ") : "none"}\n  SQS: SendMessageBatch ${sends.calls} calls, ${sends.calls > 0 ? (sends.ms / sends.calls).toFixed(1) : 0} ms each\n` +
        `  run messages in the queue: ${queued.messages} for ${queued.distinctSlots} slots, ${queued.slotsTwice} slots more than once (${heldByLanes.length} held in flight by the lanes; the old count, visible + not visible, said ${attributeSum}); ` +
        `slots handed to SendMessageBatch: ${sends.slots.size} distinct, ${[...sends.slots.values()].filter((n) => n > 1).length} more than once; ` +
        `SDK retries: ${retried.size > 0 ? [...retried].map(([name, n]) => `${name} ${n}`).join(", ") : "none"}; ` +
        `failed attempts: ${attemptErrors.size > 0 ? [...attemptErrors].map(([name, n]) => `${name} × ${n}`).join(", ") : "none"}\n` +
        `  machine: ${cpus().length} cores, load average ${loadBefore.toFixed(1)} before the tick, ${(loadavg()[0] ?? 0).toFixed(1)} after\n`,
    );
  }
  process.stdout.write(
    [
      "",
      `Scheduler tick with ${dueCount} due schedules, ${workerLanes} worker lanes for fan-out pages (DynamoDB Local + local SQS on this machine, ReturnConsumedCapacity TOTAL):`,
      "",
      "| non-due |    due | enqueued | pages | tick ms | pages ms | all enqueued ms | read units | write units | DynamoDB calls | SQS batches |",
      "|--------:|-------:|---------:|------:|--------:|---------:|----------------:|-----------:|------------:|---------------:|------------:|",
      ...rows,
      "",
    ].join("\n"),
  );
} finally {
  await Promise.all([dynamo.stop(), sqsEmulator.stop()]);
}
