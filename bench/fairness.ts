// npm run bench:fairness [-- --workers 4 --flood 40 --run-seconds 2 --others 3]
//
// Shows that one organization flooding the run queue delays another organization's run by at most
// one worker slot. `--workers` lanes play the SQS event source's concurrent workers on the run queue
// (receive one message, work it, delete it) over the local SQS emulator, with the active-run leases and
// the per-organization worker slots in DynamoDB Local, through the product's own code: runs take their
// active-run slots and are routed by shared/app/run-spillover.ts (beyond an organization's share of the
// workers, to the spillover queue), and each lane works through the fair worker
// (shared/queue/fair-worker.ts) as the run worker does, with the share the stack sets (workers − 1) and
// as many lanes on the spillover queue as that share. Organization A sends `--flood` runs at once; then
// organization B sends `--others` runs, one every `--run-seconds`. Each run is a fixed sleep of
// `--run-seconds` standing in for the optimizer (this measures the scheduling, not the search). It
// prints, with the share and without (one queue, every worker open to any organization), how long each
// of B's runs waited from its send to its start, in seconds and in run lengths, how many of A's runs
// started before each of B's, and A's total time. Both emulators share this machine's cores with the bench.
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { startDynamoDbLocal, startSqsEmulator } from "#local/emulators";
import { provisionTable } from "#local/provision";
import { tenantSlotCap } from "#shared/domain/fairness/worker-slots";
import { onDemandRunKey } from "#shared/domain/runs/active-runs";
import type { OnDemandRunMessage } from "#shared/domain/runs/messages";

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
if (!(workers >= 2) || !(flood >= 1) || !(runSeconds > 0) || !(others >= 1))
  throw new Error("usage: --workers <n ≥ 2> --flood <n ≥ 1> --run-seconds <s > 0> --others <n ≥ 1>");

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
  LOG_LEVEL: "silent",
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  TABLE_NAME: "fairness-bench",
});
await provisionTable(new DynamoDBClient({}), "fairness-bench");
const { fairPool, workFairly } = await import("#shared/queue/fair-worker");
const { resetAppConfig } = await import("#shared/config/env");
const { enqueueOnDemandRun } = await import("#shared/app/routing-result-commands");
const { releaseActiveRunSlot, takeActiveRunSlot } = await import("#shared/store/active-run-store");
const { activeRunLeaseSeconds } = await import("#shared/queue/definitions");
const sqs = new SQSClient({});
const share = tenantSlotCap(workers);

type Run = OnDemandRunMessage & { deferrals?: number };

/** As POST /routing/result enqueues a run: its active-run slot, then the queue by its organization's share (shared/app/run-spillover.ts). */
async function enqueue(run: Run): Promise<void> {
  if (!(await takeActiveRunSlot(run.organizationId, onDemandRunKey(run.resultId), 1000, new Date(), activeRunLeaseSeconds)))
    throw new Error("no active-run slot");
  await enqueueOnDemandRun(run);
}

async function scenario(
  fair: boolean,
): Promise<{ waits: number[]; aBefore: number[]; floodDoneSeconds: number; deferrals: number; spilled: number }> {
  const id = `${fair ? "on" : "off"}-${Date.now()}`;
  const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `fairness-${id}`, Attributes: { VisibilityTimeout: "600" } })))
    .QueueUrl as string;
  const spilloverUrl = (
    await sqs.send(new CreateQueueCommand({ QueueName: `fairness-spillover-${id}`, Attributes: { VisibilityTimeout: "600" } }))
  ).QueueUrl as string;
  Object.assign(process.env, { RUN_QUEUE_URL: queueUrl, RUN_SPILLOVER_QUEUE_URL: fair ? spilloverUrl : "" });
  if (fair) process.env.RUN_WORKER_SLOTS_PER_TENANT = String(share);
  else delete process.env.RUN_WORKER_SLOTS_PER_TENANT;
  resetAppConfig();
  // Deferred runs go to the spillover queue, as the run worker's pool does (functions/jobs/routing-run.ts).
  const pool = fairPool(`bench-${id}`, spilloverUrl, share, 600);
  const started = new Map<string, number>();
  let floodStarted = 0;
  const aStartedBefore = new Map<string, number>();
  let deferrals = 0;
  // Runs the enqueue routed to the spillover queue (seen there before any deferral).
  const spilledRuns = new Set<string>();
  let floodFinished = 0;
  let lastFloodEnd = 0;
  let stop = false;
  const t0 = Date.now();
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const work = async (run: Run) => {
    if (!started.has(run.resultId)) {
      started.set(run.resultId, Date.now());
      if (run.organizationId === "org-a") floodStarted++;
      else aStartedBefore.set(run.resultId, floodStarted);
    }
    await sleep(runSeconds * 1000);
    await releaseActiveRunSlot(run.organizationId, onDemandRunKey(run.resultId));
    if (run.organizationId === "org-a") {
      floodFinished++;
      lastFloodEnd = Date.now();
    }
  };
  const lane = async (laneQueueUrl: string) => {
    while (!stop) {
      const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: laneQueueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 1 }));
      const message = received.Messages?.[0];
      if (!message) continue;
      const run = JSON.parse(message.Body as string) as Run;
      if (laneQueueUrl === spilloverUrl && run.deferrals === undefined) spilledRuns.add(run.resultId);
      if (fair) {
        const outcome = await workFairly(pool, { tenantId: run.organizationId, workKey: run.resultId, body: run }, () => work(run));
        if (!outcome.started) deferrals++;
      } else {
        await work(run);
      }
      await sqs.send(new DeleteMessageCommand({ QueueUrl: laneQueueUrl, ReceiptHandle: message.ReceiptHandle as string }));
    }
  };
  const lanes = [
    ...Array.from({ length: workers }, () => lane(queueUrl)),
    ...(fair ? Array.from({ length: Math.max(2, share) }, () => lane(spilloverUrl)) : []),
  ];
  // A floods: all its runs at once (one call each, as POST /routing/result).
  for (let i = 0; i < flood; i++) await enqueue({ kind: "onDemand", organizationId: "org-a", resultId: `a-${i}` });
  // B sends its runs one run-length apart, once the flood is queued and the workers are busy.
  const sentB = new Map<string, number>();
  for (let i = 0; i < others; i++) {
    await sleep(runSeconds * 1000);
    const run: Run = { kind: "onDemand", organizationId: "org-b", resultId: `b-${i}` };
    sentB.set(run.resultId, Date.now());
    await enqueue(run);
  }
  while (floodFinished < flood || [...sentB.keys()].some((runId) => !started.has(runId))) await sleep(200);
  stop = true;
  await Promise.all(lanes);
  return {
    waits: [...sentB].map(([runId, sentAt]) => ((started.get(runId) as number) - sentAt) / 1000),
    aBefore: [...sentB.keys()].map((runId) => aStartedBefore.get(runId) as number),
    floodDoneSeconds: (lastFloodEnd - t0) / 1000,
    deferrals,
    spilled: spilledRuns.size,
  };
}

console.log(
  `bench:fairness — ${workers} workers on the run queue (share per organization: ${share}, and ${Math.max(2, share)} on the spillover queue), A floods ${flood} runs, B sends ${others}, each run ${runSeconds} s`,
);
console.log(
  `machine: ${cpus().length} cores, load ${loadavg()
    .map((load) => load.toFixed(2))
    .join(" ")}`,
);
for (const fair of [false, true]) {
  const { waits, aBefore, floodDoneSeconds, deferrals, spilled } = await scenario(fair);
  const slots = waits.map((wait) => wait / runSeconds);
  console.log(
    `${fair ? "share  " : "no share"} B waited ${waits.map((wait) => `${wait.toFixed(1)} s`).join(", ")} (max ${Math.max(...slots).toFixed(2)} run lengths); A's runs started before each of B's: ${aBefore.join(", ")}; A's ${flood} runs done after ${floodDoneSeconds.toFixed(1)} s; spilled ${spilled}, deferrals ${deferrals}`,
  );
}
console.log(
  `machine after: load ${loadavg()
    .map((load) => load.toFixed(2))
    .join(" ")}`,
);
await sqsEmulator.stop();
await dynamo.stop();
process.exit(0);
