// npm run bench:fairness [-- --workers 4 --flood 40 --run-seconds 2 --others 3]
//
// Shows that one organization flooding the run queue delays another organization's run by at most
// one worker slot. `--workers` lanes play the SQS event source's concurrent workers (receive one
// message, work it, delete it) over the local SQS emulator, with the per-organization worker slots in
// DynamoDB Local: the product's own fair worker (shared/queue/fair-worker.ts, as the run worker uses
// it, with the cap the stack sets: workers − 1). Organization A sends `--flood` runs at once; then
// organization B sends `--others` runs, one every `--run-seconds`. Each run is a fixed sleep of
// `--run-seconds` standing in for the optimizer (this measures the scheduling, not the search). It
// prints, with fairness and without (every worker open to any organization), how long each of B's
// runs waited from its send to its start, in seconds and in run lengths, and A's total time. Both
// emulators share this machine's cores with the bench.
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { startDynamoDbLocal, startSqsEmulator } from "#local/emulators";
import { provisionTable } from "#local/provision";
import { tenantSlotCap } from "#shared/domain/fairness/worker-slots";

const { values } = parseArgs({
  options: {
    workers: { type: "string", default: "4" },
    flood: { type: "string", default: "40" },
    "run-seconds": { type: "string", default: "2" },
    others: { type: "string", default: "3" },
  },
});
const workers = Number(values.workers);
const flood = Number(values.flood);
const runSeconds = Number(values["run-seconds"]);
const others = Number(values.others);
if (!(workers >= 2) || !(flood >= 1) || !(runSeconds > 0) || !(others >= 1)) throw new Error("usage: --workers <n ≥ 2> --flood <n ≥ 1> --run-seconds <s > 0> --others <n ≥ 1>");

const dynamo = process.env.BENCH_DYNAMODB_ENDPOINT ? { endpoint: process.env.BENCH_DYNAMODB_ENDPOINT, stop: async () => undefined } : await startDynamoDbLocal();
const sqsEmulator = await startSqsEmulator();
Object.assign(process.env, {
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "local",
  AWS_SECRET_ACCESS_KEY: "local",
  AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
  AWS_ENDPOINT_URL_SQS: sqsEmulator.endpoint,
  LOG_LEVEL: "silent",
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  TABLE_NAME: "fairness-bench",
});
await provisionTable(new DynamoDBClient({}), "fairness-bench");
const { fairPool, workFairly } = await import("#shared/queue/fair-worker");
const sqs = new SQSClient({});

interface Run {
  organizationId: string;
  runId: string;
  sentAt: number;
  deferrals?: number;
}

async function scenario(fair: boolean): Promise<{ waits: number[]; floodDoneSeconds: number; deferrals: number }> {
  const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `fairness-${fair ? "on" : "off"}-${Date.now()}`, Attributes: { VisibilityTimeout: "600" } }))).QueueUrl as string;
  const pool = fairPool(`bench-${Date.now()}`, queueUrl, tenantSlotCap(workers), 600);
  const started = new Map<string, number>();
  let deferrals = 0;
  let floodFinished = 0;
  let lastFloodEnd = 0;
  let stop = false;
  const t0 = Date.now();
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const work = async (run: Run) => {
    if (!started.has(run.runId)) started.set(run.runId, Date.now());
    await sleep(runSeconds * 1000);
    if (run.organizationId === "org-a") {
      floodFinished++;
      lastFloodEnd = Date.now();
    }
  };
  const lanes = Array.from({ length: workers }, async () => {
    while (!stop) {
      const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 1 }));
      const message = received.Messages?.[0];
      if (!message) continue;
      const run = JSON.parse(message.Body as string) as Run;
      if (fair) {
        const outcome = await workFairly(pool, { tenantId: run.organizationId, workKey: run.runId, body: run }, () => work(run));
        if (!outcome.started) deferrals++;
      } else {
        await work(run);
      }
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle as string }));
    }
  });
  // A floods: every run at once, in batches of 10.
  for (let i = 0; i < flood; i += 10) {
    const batch = Array.from({ length: Math.min(10, flood - i) }, (_, j) => ({ organizationId: "org-a", runId: `a-${i + j}`, sentAt: Date.now() }));
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch.map((run, j) => ({ Id: String(j), MessageBody: JSON.stringify(run) })) }));
  }
  // B sends its runs one run-length apart, once the flood is queued and the workers are busy.
  const sentB = new Map<string, number>();
  for (let i = 0; i < others; i++) {
    await sleep(runSeconds * 1000);
    const run = { organizationId: "org-b", runId: `b-${i}`, sentAt: Date.now() };
    sentB.set(run.runId, run.sentAt);
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(run) }));
  }
  while (floodFinished < flood || [...sentB.keys()].some((id) => !started.has(id))) await sleep(200);
  stop = true;
  await Promise.all(lanes);
  return { waits: [...sentB].map(([id, sentAt]) => ((started.get(id) as number) - sentAt) / 1000), floodDoneSeconds: (lastFloodEnd - t0) / 1000, deferrals };
}

console.log(`bench:fairness — ${workers} workers (cap per organization with fairness: ${tenantSlotCap(workers)}), A floods ${flood} runs, B sends ${others}, each run ${runSeconds} s`);
console.log(`machine: ${cpus().length} cores, load ${loadavg().map((load) => load.toFixed(2)).join(" ")}`);
for (const fair of [false, true]) {
  const { waits, floodDoneSeconds, deferrals } = await scenario(fair);
  const slots = waits.map((wait) => wait / runSeconds);
  console.log(
    `${fair ? "fair   " : "unfair "} B waited ${waits.map((wait) => `${wait.toFixed(1)} s`).join(", ")} (max ${Math.max(...slots).toFixed(2)} run lengths); A's ${flood} runs done after ${floodDoneSeconds.toFixed(1)} s; deferrals ${deferrals}`,
  );
}
await sqsEmulator.stop();
await dynamo.stop();
process.exit(0);
