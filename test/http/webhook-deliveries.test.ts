import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { permissionSlugs } from "#functions/routes";
import { generateSigningKey, mintToken } from "#local/tokens";
import { type LocalStack, startLocalStack } from "#local/stack";
import { inProcessBus } from "#shared/queue/event-bus";
import { newOrganizationId } from "#test/support/local-api";
import { ALWAYS_ON_SHIFT } from "#test/support/shifts";

/**
 * Webhooks end to end on a local stack of this file's own (the shared test stack runs no workers):
 * the run worker, the scheduler's minute ticker, the stream poller feeding the publisher and the
 * delivery worker all run, with loopback receivers allowed and a retry schedule of seconds.
 */
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";
process.env.WEBHOOK_RETRY_SCHEDULE_SECONDS = "1,3,6";
process.env.LOG_LEVEL = "silent";

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

const received: Received[] = [];
/** Answers per path, consumed in order; then 200. */
const scripted = new Map<string, number[]>();
let receiver: Server;
let receiverUrl = "";
let stack: LocalStack;
const signingKey = generateSigningKey();

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const path = request.url ?? "/";
      received.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
      const status = scripted.get(path)?.shift() ?? 200;
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((listening) => receiver.listen(0, "127.0.0.1", () => listening()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  stack = await startLocalStack({ port: 0, inMemory: true, stateDirectory: "", signingKey, runScheduler: true, onBackgroundError: () => undefined });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await new Promise<void>((closed) => receiver?.close(() => closed()));
});

function client(organizationId: string) {
  const token = mintToken(signingKey, { sub: "user-1", organizationId, permissions: [...permissionSlugs] });
  return async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${stack.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
}

async function tenantWithFleet() {
  const organizationId = newOrganizationId();
  const call = client(organizationId);
  const create = async (path: string, body: unknown) => {
    const answer = await call("POST", path, body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body.data;
  };
  const hub = await create("/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
  await create("/vehicle", { name: "Van 1", hubId: hub._id, workingTime: ALWAYS_ON_SHIFT });
  for (let i = 0; i < 3; i++) await create("/visit", { hubId: hub._id, name: `Stop ${i + 1}`, coordinate: { lat: -6.2 + 0.01 * (i + 1), lng: 106.8 } });
  const profile = await create("/routing/configuration", { name: "Plan", hubId: hub._id, timeLimitSeconds: 1 });
  return { organizationId, call, create, hub, profile };
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const deliveriesTo = (path: string) => received.filter((entry) => entry.path === path);

describe("Webhook deliveries (local stack with workers)", () => {
  it(
    "delivers a correctly signed routing.result.completed after an on-demand run, to this organization's webhook only",
    async () => {
      const tenant = await tenantWithFleet();
      const other = await tenantWithFleet();
      const hook = (await tenant.create("/webhook", { url: `${receiverUrl}/acme`, events: ["routing.result.completed"] })) as { _id: string; secret: string };
      await other.create("/webhook", { url: `${receiverUrl}/other`, events: ["routing.result.completed", "routing.result.failed", "routing.result.dispatched"] });

      const result = await tenant.create("/routing/result", { configurationId: tenant.profile._id });
      const delivery = await until("the delivery", () => deliveriesTo("/acme")[0], 60_000);

      const event = new Webhook(hook.secret).verify(delivery.body, {
        "webhook-id": String(delivery.headers["webhook-id"]),
        "webhook-timestamp": String(delivery.headers["webhook-timestamp"]),
        "webhook-signature": String(delivery.headers["webhook-signature"]),
      }) as { type: string; data: Record<string, unknown> };
      expect(event).toMatchObject({ type: "routing.result.completed", data: { organizationId: tenant.organizationId, resultId: result._id, hubId: tenant.hub._id, scheduleId: null, status: "done" } });
      expect(delivery.headers["content-type"]).toBe("application/json");

      // A wrong secret fails verification.
      const otherSecret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
      expect(() =>
        new Webhook(otherSecret).verify(delivery.body, {
          "webhook-id": String(delivery.headers["webhook-id"]),
          "webhook-timestamp": String(delivery.headers["webhook-timestamp"]),
          "webhook-signature": String(delivery.headers["webhook-signature"]),
        }),
      ).toThrow();

      // POST /webhook/{id}/test sends a signed webhook.test to this webhook.
      const queued = await tenant.call("POST", `/webhook/${hook._id}/test`);
      expect(queued.status).toBe(202);
      const ping = await until("the test event", () => deliveriesTo("/acme").find((entry) => entry.headers["webhook-id"] === queued.body.data.eventId), 30_000);
      expect(new Webhook(hook.secret).verify(ping.body, { ...(ping.headers as Record<string, string>) })).toMatchObject({ type: "webhook.test", data: { webhookId: hook._id } });

      // The operator's bus saw it too, with the same id.
      expect(inProcessBus.published.find((stored) => stored.id === delivery.headers["webhook-id"])?.event.type).toBe("routing.result.completed");

      // The other organization's webhook got none of this organization's events (its own run would arrive there).
      const ownRun = await other.create("/routing/result", { configurationId: other.profile._id });
      const ownDelivery = await until("the other organization's own delivery", () => deliveriesTo("/other")[0], 60_000);
      expect(JSON.parse(ownDelivery.body).data.resultId).toBe(ownRun._id);
      expect(deliveriesTo("/other").every((entry) => JSON.parse(entry.body).data.organizationId === other.organizationId)).toBe(true);
      expect(deliveriesTo("/acme").every((entry) => JSON.parse(entry.body).data.organizationId === tenant.organizationId)).toBe(true);
    },
    150_000,
  );

  it(
    "retries a receiver that fails twice: three attempts with growing delays, the same webhook-id, then delivered",
    async () => {
      const tenant = await tenantWithFleet();
      scripted.set("/flaky", [500, 503]);
      const hook = (await tenant.create("/webhook", { url: `${receiverUrl}/flaky`, events: ["routing.result.completed"] })) as { _id: string; secret: string };
      await tenant.create("/routing/result", { configurationId: tenant.profile._id });
      const attempts = await until("three attempts", () => (deliveriesTo("/flaky").length >= 3 ? deliveriesTo("/flaky") : undefined), 90_000);
      expect(attempts).toHaveLength(3);
      expect(new Set(attempts.map((attempt) => attempt.headers["webhook-id"])).size).toBe(1);
      const [first, second, third] = attempts as [Received, Received, Received];
      const gaps = [second.at - first.at, third.at - second.at];
      // Schedule 1 s, 3 s: each wait at least its delay, the second longer than the first.
      expect(gaps[0]).toBeGreaterThanOrEqual(1_000);
      expect(gaps[1]).toBeGreaterThanOrEqual(3_000);
      expect(gaps[1]).toBeGreaterThan(gaps[0] as number);
      for (const attempt of attempts) {
        expect(() => new Webhook(hook.secret).verify(attempt.body, { ...(attempt.headers as Record<string, string>) })).not.toThrow();
      }
      const listed = await until("the delivered record", async () => {
        const page = (await tenant.call("GET", `/webhook/${hook._id}/deliveries`)).body.data as Array<Record<string, unknown>>;
        return page[0]?.status === "delivered" ? page : undefined;
      }, 10_000);
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({ eventId: third.headers["webhook-id"], eventType: "routing.result.completed", status: "delivered", attempts: 3, lastResponseCode: 200, nextRetryAt: null });
      // Another organization cannot read them.
      expect((await (await tenantWithFleet()).call("GET", `/webhook/${hook._id}/deliveries`)).status).toBe(404);
    },
    150_000,
  );

  it(
    "delivers routing.result.completed after a scheduled run",
    async () => {
      const tenant = await tenantWithFleet();
      const hook = (await tenant.create("/webhook", { url: `${receiverUrl}/scheduled`, events: ["routing.result.completed"] })) as { secret: string };
      const runAt = new Date(Math.ceil((Date.now() + 20_000) / 60_000) * 60_000);
      const [date, time] = runAt.toISOString().slice(0, 16).split("T") as [string, string];
      const schedule = await tenant.create("/routing/schedule", { name: "Hooked", configurationId: tenant.profile._id, periode: "byDate", schedules: [{ date, time: [time] }] });
      const delivery = await until("the scheduled run's delivery", () => deliveriesTo("/scheduled")[0], 150_000);
      const event = new Webhook(hook.secret).verify(delivery.body, { ...(delivery.headers as Record<string, string>) }) as { type: string; data: Record<string, unknown> };
      expect(event).toMatchObject({ type: "routing.result.completed", data: { organizationId: tenant.organizationId, scheduleId: schedule._id, status: "done" } });
    },
    180_000,
  );
});
