import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageBatchCommand, SQSClient } from "@aws-sdk/client-sqs";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalScheduler, startQueuePoller } from "#local/scheduler";
import { resetAppConfig } from "#shared/config/env";
import { newId } from "#shared/domain/ids";
import type { DeliveryMessage } from "#shared/domain/webhooks/delivery";
import { sealingContext } from "#shared/domain/webhooks/sealing";
import { newSigningSecret } from "#shared/domain/webhooks/signing";
import { webhookQueueDefinition, webhookSlotsPerTenant, webhookWorkerTimeoutSeconds } from "#shared/queue/definitions";
import { webhookSealer } from "#shared/app/webhooks";
import { listDeliveries, openDelivery } from "#shared/store/webhook-delivery-store";
import { dynamoWebhookStore } from "#shared/store/webhook-store";
import { newOrganizationId } from "#test/support/local-api";
import { until as untilEvery } from "#test/support/webhook-receiver";

/** Polls every 50 ms: the arrivals are in memory. */
const until = <T>(what: string, probe: () => T | undefined, timeoutMs: number) => untilEvery(what, probe, timeoutMs, 50);

/**
 * The delivery workers' fair share (shared/queue/fair-worker.ts) as a behaviour: organization A's
 * receiver is dead (it never answers; each attempt waits for its 10 s timeout) and A has a backlog
 * of deliveries queued ahead of organization B's one. The real delivery worker runs behind
 * `workers` local pollers side by side (as the event source runs its maximum concurrency of
 * invocations), batches of 10, on a queue of this file's own, with the stack's share.
 * Without the share every worker takes a batch of A's and waits on it, and B's message is reached
 * only after A's first attempts have timed out; with it, A holds at most its share and the worker
 * left over passes A's messages back to the queue and delivers B's while A's attempts still hang.
 * The assertion is on counts at the moment B's event arrives, never on durations.
 */
const workers = 4;
/** Workers one organization may hold: 3 of 4, so at most 30 of its attempts at once. */
const share = webhookSlotsPerTenant(workers);
const mostAttemptsOfA = share * webhookQueueDefinition.batchSize;
const backlog = workers * webhookQueueDefinition.batchSize + 5;

interface Arrival {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const arrivals: Arrival[] = [];
/** Requests to the dead receiver not answered (the worker gave up, or is still waiting). */
const hanging = new Set<ServerResponse>();
let receiverUrl = "";
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    arrivals.push({ path: request.url ?? "/", headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
    if (request.url === "/dead") {
      hanging.add(response);
      response.on("close", () => hanging.delete(response));
      return;
    }
    response.writeHead(200).end();
  });
});

const sqs = new SQSClient({});
let queueUrl = "";
let pollers: LocalScheduler | undefined;

const environmentBefore = { ...process.env };

beforeAll(async () => {
  await new Promise<void>((listening) => receiver.listen(0, "127.0.0.1", () => listening()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `webhook-fairness-${randomUUID().slice(0, 8)}` }))).QueueUrl as string;
  // The worker of this file: its queue (retries and deferrals go back to it), loopback receivers, the share.
  process.env.WEBHOOK_QUEUE_URL = queueUrl;
  process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";
  process.env.WEBHOOK_RETRY_SCHEDULE_SECONDS = "1,1,1";
  process.env.WEBHOOK_WORKER_SLOTS_PER_TENANT = String(share);
  resetAppConfig();
});

afterAll(async () => {
  receiver.closeAllConnections();
  await pollers?.stop();
  await new Promise<void>((closed) => receiver.close(() => closed()));
  for (const name of [
    "WEBHOOK_QUEUE_URL",
    "WEBHOOKS_ALLOW_LOOPBACK",
    "WEBHOOK_RETRY_SCHEDULE_SECONDS",
    "WEBHOOK_WORKER_SLOTS_PER_TENANT",
  ]) {
    if (environmentBefore[name] === undefined) delete process.env[name];
    else process.env[name] = environmentBefore[name];
  }
  resetAppConfig();
});

async function subscription(organizationId: string, path: string) {
  const webhookId = newId(new Date());
  const secret = newSigningSecret();
  const now = new Date().toISOString();
  const inserted = await dynamoWebhookStore.insertWithinCap(
    {
      _id: webhookId,
      organizationId,
      url: `${receiverUrl}${path}`,
      events: ["routing.result.completed"],
      description: null,
      enabled: true,
      disabledReason: null,
      sealedSecret: await webhookSealer().seal(secret, sealingContext(organizationId, webhookId)),
      createdTime: now,
      updatedTime: now,
    },
    10,
  );
  expect(inserted).toBe(true);
  return { organizationId, webhookId, secret };
}

/** One delivery of a completed-run event to the subscription, opened as the publisher opens it. */
async function delivery(hook: { organizationId: string; webhookId: string }, index: number): Promise<DeliveryMessage> {
  const eventId = `evt_fairness_${hook.organizationId}_${index}`;
  const timestamp = new Date().toISOString();
  const body = JSON.stringify({
    type: "routing.result.completed",
    timestamp,
    data: {
      organizationId: hook.organizationId,
      resultId: newId(new Date()),
      hubId: "h",
      configurationId: "c",
      scheduleId: null,
      status: "done",
    },
  });
  const deliveryId = `${timestamp}_${eventId}`;
  await openDelivery(hook.organizationId, hook.webhookId, deliveryId, eventId, "routing.result.completed", new Date());
  return {
    organizationId: hook.organizationId,
    webhookId: hook.webhookId,
    eventId,
    eventType: "routing.result.completed",
    deliveryId,
    body,
    attempt: 1,
  };
}

async function enqueue(messages: DeliveryMessage[]): Promise<void> {
  for (let i = 0; i < messages.length; i += 10) {
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.slice(i, i + 10).map((message, index) => ({ Id: String(index), MessageBody: JSON.stringify(message) })),
      }),
    );
  }
}

describe("Webhook delivery fairness (the real delivery worker behind local pollers)", () => {
  it(`delivers B's event while A's dead receiver holds A's backlog of ${backlog}: A never holds more than its share of the workers (${share} of ${workers})`, async () => {
    const deadA = await subscription(newOrganizationId(), "/dead");
    const aliveB = await subscription(newOrganizationId(), "/alive");
    // A's backlog first, then B's one delivery behind it, all queued before any worker runs.
    const messagesOfA = await Promise.all(Array.from({ length: backlog }, (_, index) => delivery(deadA, index)));
    await enqueue(messagesOfA);
    await enqueue([await delivery(aliveB, 0)]);

    const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["QueueArn"] }))).Attributes
      ?.QueueArn as string;
    pollers = startQueuePoller(
      sqs,
      queueUrl,
      arn,
      async () => (await import("#functions/jobs/webhook-delivery")).handler,
      () => undefined,
      {
        name: "webhook-delivery",
        timeoutSeconds: webhookWorkerTimeoutSeconds,
        batchSize: webhookQueueDefinition.batchSize,
        concurrency: workers,
      },
    );

    const toB = await until("B's delivery", () => arrivals.find((arrival) => arrival.path === "/alive"), 60_000);
    const attemptsOfA = arrivals.filter((arrival) => arrival.path === "/dead").length;
    const stillHanging = hanging.size;

    expect(new Webhook(aliveB.secret).verify(toB.body, { ...(toB.headers as Record<string, string>) })).toMatchObject({
      data: { organizationId: aliveB.organizationId },
    });
    // B overtook A's backlog: when B's event arrived, A's dead receiver had seen at most A's share of
    // attempts (not the backlog), and they were all still waiting for an answer.
    expect(attemptsOfA).toBeGreaterThan(0);
    expect(attemptsOfA).toBeLessThanOrEqual(mostAttemptsOfA);
    expect(stillHanging).toBe(attemptsOfA);

    // A's backlog is retried, not lost: its attempts time out and come back as retries.
    const retried = await until(
      "A's first retries",
      () => {
        const retries = arrivals.filter((arrival) => arrival.path === "/dead").length - attemptsOfA;
        return retries > 0 ? retries : undefined;
      },
      60_000,
    );
    expect(retried).toBeGreaterThan(0);
    const page = await listDeliveries(deadA.organizationId, deadA.webhookId, { limit: 100 });
    expect(page.items.some((item) => item.status === "retrying")).toBe(true);
  }, 120_000);
});
