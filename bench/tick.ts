// npm run bench:tick [-- --due 10 --sizes 100,1000,10000]
//
// Shows that the scheduler tick's cost follows the number of DUE schedules, not the number of
// schedules: for each size it fills a fresh table with that many non-due schedules plus a fixed
// number of due ones, runs one tick at the due minute, and prints the DynamoDB capacity units the
// tick consumed (ReturnConsumedCapacity TOTAL on every call it makes: the due-index queries, the
// per-schedule reads, the claims and the advances). Runs against DynamoDB Local and the local SQS
// emulator, started here.
import { parseArgs } from "node:util";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { ScheduledEvent } from "aws-lambda";
import { startDynamoDbLocal, startSqsEmulator } from "#local/emulators";
import { provisionQueues, provisionTable } from "#local/provision";

const { values } = parseArgs({ options: { due: { type: "string", default: "10" }, sizes: { type: "string", default: "100,1000,10000" } } });
const dueCount = Number(values.due);
const sizes = values.sizes.split(",").map(Number);

const dynamo = await startDynamoDbLocal();
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
const { documentClient } = await import("#shared/store/dynamo");
const { dynamoScheduleStore } = await import("#shared/store/schedule-store");
const { createScheduleService } = await import("#shared/domain/schedules/service");
const { handler: tick } = await import("#functions/jobs/scheduler-tick");

/** Every DynamoDB call made through the shared document client asks for, and reports, its consumed capacity. */
const consumed = { read: 0, write: 0, calls: 0, byCommand: new Map<string, number>() };
documentClient().middlewareStack.add(
  (next, context) => async (args) => {
    (args.input as Record<string, unknown>).ReturnConsumedCapacity = "TOTAL";
    const result = await next(args);
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
    consumed.byCommand.set(command, (consumed.byCommand.get(command) ?? 0) + units);
    return result;
  },
  { step: "initialize", name: "consumedCapacity" },
);

const owner = { userId: "bench", organizationId: "bench-org", hubIds: [], permissions: new Set<string>(), permissionDetails: [] };
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
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (next < count) await work(next++);
  }));
}

const rows: string[] = [];
try {
  for (const size of sizes) {
    const table = `bench-tick-${size}`;
    await provisionTable(new DynamoDBClient({}), table);
    process.env.TABLE_NAME = table;
    resetAppConfig();
    // The profile check is not what is measured: the service is built without it.
    const service = createScheduleService({ store: dynamoScheduleStore, hubConfigurations: { configurationIdsOfHub: async () => [] }, timeZone: () => "UTC" });
    const due = [];
    for (let i = 0; i < dueCount; i++) due.push(await service.create(owner, schedule(`due ${i}`, "2020-01-01 00:00")));
    // Non-due: the same timetable, but their window opens in 2098, so their next run is decades away.
    await inParallel(size, 25, (i) => service.create(owner, schedule(`later ${i}`, "2098-01-01 00:00")));
    const dueAt = (await dynamoScheduleStore.find(owner.organizationId, due[0]?._id as string))?.schedule.nextRunAt as string;

    consumed.read = 0;
    consumed.write = 0;
    consumed.calls = 0;
    consumed.byCommand.clear();
    const started = performance.now();
    const outcome = await tick({ time: new Date(new Date(dueAt).getTime() + 20_000).toISOString() } as ScheduledEvent);
    const ms = performance.now() - started;
    const byCommand = [...consumed.byCommand].map(([command, units]) => `${command.replace("Command", "")} ${units}`).join(", ");
    rows.push(
      `| ${String(size).padStart(6)} | ${String(dueCount).padStart(3)} | ${String(outcome.enqueued).padStart(8)} | ${consumed.read.toFixed(1).padStart(10)} | ${consumed.write.toFixed(1).padStart(11)} | ${String(consumed.calls).padStart(5)} | ${ms.toFixed(0).padStart(7)} | ${byCommand} |`,
    );
    process.stdout.write(`size ${size}: done\n`);
  }
  process.stdout.write(
    [
      "",
      `Scheduler tick cost with ${dueCount} due schedules (DynamoDB Local, ReturnConsumedCapacity TOTAL):`,
      "",
      "| non-due | due | enqueued | read units | write units | calls | tick ms | units by command |",
      "|--------:|----:|---------:|-----------:|------------:|------:|--------:|------------------|",
      ...rows,
      "",
    ].join("\n"),
  );
} finally {
  await Promise.all([dynamo.stop(), sqsEmulator.stop()]);
}
