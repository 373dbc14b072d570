import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { scheduledRunOverCapReason } from "#shared/domain/runs/active-runs";
import { inProcessBus } from "#shared/queue/event-bus";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { newOrganizationId } from "#test/support/local-api";
import { ownStackWithReceiver, type ReceivedDelivery as Received, until } from "#test/support/webhook-receiver";
import { refusal } from "#test/support/refusals";
import { ALWAYS_ON_SHIFT } from "#test/support/shifts";
import { postExport } from "#test/support/export-upload";
import { inlineRefs } from "#test/support/openapi-refs";

/**
 * Webhooks end to end on a local stack of this file's own (the shared test stack runs no workers):
 * the run worker, the scheduler (ticked by the test for the minute it needs: `own.stack().tick`, the tick
 * reading "now" from its event as on AWS, so no test waits for a wall-clock minute), the stream
 * poller feeding the publisher and the delivery worker all run, with loopback receivers allowed and a retry schedule of seconds. Every
 * event is checked as a client would: its signature with the `standardwebhooks` package, its payload
 * against the OpenAPI document's `webhooks` schema, and its ids by reading the resources they name.
 */
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";
process.env.WEBHOOK_RETRY_SCHEDULE_SECONDS = "1,3,6";
process.env.LOG_LEVEL = "silent";

const own = ownStackWithReceiver({
  stack: {
    ticker: "manual",
    // One run queued or running at once: the second of two runs due in the same minute is skipped by the tick.
    planOverrides: {
      plans: [{ name: "one-run", description: "one routing run queued or running", rate: 100, burst: 100, maxRunsQueued: 1 }],
    },
  },
});
const { client, receiver } = own;
const received = receiver.received;
const scripted = receiver.scripted;

async function tenantWithFleet() {
  const organizationId = newOrganizationId();
  const call = client(organizationId);
  const create = async (path: string, body: unknown) => {
    const answer = await call("POST", path, body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body.data;
  };
  const hub = await create("/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
  const vehicle = await create("/vehicle", { name: "Van 1", hubId: hub._id, workingTime: ALWAYS_ON_SHIFT });
  for (let i = 0; i < 3; i++)
    await create("/visit", { hubId: hub._id, name: `Stop ${i + 1}`, coordinate: { lat: -6.2 + 0.01 * (i + 1), lng: 106.8 } });
  const profile = await create("/routing/configuration", { name: "Plan", hubId: hub._id, timeLimitSeconds: 1 });
  return { organizationId, call, create, hub, vehicle, profile };
}

const deliveriesTo = (path: string) => received.filter((entry) => entry.path === path);

interface DeliveredEvent {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** The delivery's event, once its Standard Webhooks signature verified under the subscription's secret. */
function verified(secret: string, delivery: Received): DeliveredEvent {
  return new Webhook(secret).verify(delivery.body, {
    "webhook-id": String(delivery.headers["webhook-id"]),
    "webhook-timestamp": String(delivery.headers["webhook-timestamp"]),
    "webhook-signature": String(delivery.headers["webhook-signature"]),
  }) as DeliveredEvent;
}

/**
 * Checks the event against its schema in the OpenAPI document the stack serves (`webhooks` section,
 * the POST a subscription receives), and that its timestamp is an ISO 8601 UTC instant of this run.
 */
/** `latest`: the latest time the event may carry (now, or the minute a test ticked ahead of the clock). */
async function expectDocumentedEvent(event: DeliveredEvent, startedAt: number, latest = Date.now()): Promise<void> {
  const document = (await (await fetch(`${own.stack().baseUrl}/openapi.json`)).json()) as {
    webhooks: Record<string, { post: { requestBody: { content: { "application/json": { schema: unknown } } } } }>;
    components: { schemas: Record<string, unknown> };
  };
  const documented = document.webhooks[event.type]?.post.requestBody.content["application/json"].schema;
  expect(documented, `the OpenAPI webhooks section documents ${event.type}`).toBeDefined();
  const parsed = z.fromJSONSchema(inlineRefs(document, documented)).safeParse(event);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  expect(new Date(event.timestamp).toISOString()).toBe(event.timestamp);
  expect(Date.parse(event.timestamp)).toBeGreaterThanOrEqual(Math.floor(startedAt / 1000) * 1000 - 1000);
  expect(Date.parse(event.timestamp)).toBeLessThanOrEqual(Math.max(latest, Date.now()));
}

/** Puts the organization on a plan, as the operator's tenant CLI does (overwrites its auto-enrolled record). */
async function putOnPlan(organizationId: string, plan: string): Promise<void> {
  await documentClient().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.tenant(organizationId),
        GSI1PK: keys.tenantsIndexPartition,
        GSI1SK: organizationId,
        entity: "tenant",
        organizationId,
        plan,
        status: "active",
        createdTime: "2026-01-01 00:00:00",
        updatedTime: "2026-01-01 00:00:00",
      },
    }),
  );
}

const legacyExport = (name: string, records: number, announced = records) =>
  `${[
    JSON.stringify({
      format: "field-operations-export",
      formatVersion: 2,
      dataType: {
        name,
        commonData: true,
        fields: [
          { id: "dataId", title: "Code", type: "primaryKey", required: true, unique: true, searchable: true, primaryKey: true },
          { id: "label", title: "Label", type: "string", required: true },
        ],
      },
      recordCount: announced,
    }),
    ...Array.from({ length: records }, (_, i) => JSON.stringify({ dataId: `SKU-${i + 1}`, values: { label: `Item ${i + 1}` } })),
  ].join("\n")}\n`;

/** Uploads an export and starts its import (copy); answers the upload id and the data type. */
async function startImport(call: ReturnType<typeof client>, text: string): Promise<{ uploadId: string; dataTypeId: string }> {
  const target = await call("POST", "/data-type/import/upload");
  expect(target.status, JSON.stringify(target.body)).toBe(201);
  expect((await postExport(target.body.data, text)).status).toBe(204);
  const started = await call("POST", "/data-type/import", { mode: "copy", source: { uploadId: target.body.data.uploadId } });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  return { uploadId: target.body.data.uploadId, dataTypeId: started.body.data_type._id };
}

describe("Webhook deliveries (local stack with workers)", () => {
  it("delivers a correctly signed routing.result.completed after an on-demand run, to this organization's webhook only", async () => {
    const tenant = await tenantWithFleet();
    const other = await tenantWithFleet();
    const hook = (await tenant.create("/webhook", { url: `${receiver.url}/acme`, events: ["routing.result.completed"] })) as {
      _id: string;
      secret: string;
    };
    await other.create("/webhook", {
      url: `${receiver.url}/other`,
      events: ["routing.result.completed", "routing.result.failed", "routing.result.dispatched"],
    });

    const result = await tenant.create("/routing/result", { configurationId: tenant.profile._id });
    const delivery = await until("the delivery", () => deliveriesTo("/acme")[0], 60_000);

    const event = new Webhook(hook.secret).verify(delivery.body, {
      "webhook-id": String(delivery.headers["webhook-id"]),
      "webhook-timestamp": String(delivery.headers["webhook-timestamp"]),
      "webhook-signature": String(delivery.headers["webhook-signature"]),
    }) as { type: string; data: Record<string, unknown> };
    expect(event).toMatchObject({
      type: "routing.result.completed",
      data: { organizationId: tenant.organizationId, resultId: result._id, hubId: tenant.hub._id, scheduleId: null, status: "done" },
    });
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
    const ping = await until(
      "the test event",
      () => deliveriesTo("/acme").find((entry) => entry.headers["webhook-id"] === queued.body.data.eventId),
      30_000,
    );
    expect(new Webhook(hook.secret).verify(ping.body, { ...(ping.headers as Record<string, string>) })).toMatchObject({
      type: "webhook.test",
      data: { webhookId: hook._id },
    });

    // The operator's bus saw it too, with the same id.
    expect(inProcessBus.published.find((stored) => stored.id === delivery.headers["webhook-id"])?.event.type).toBe(
      "routing.result.completed",
    );

    // The other organization's webhook got none of this organization's events (its own run would arrive there).
    const ownRun = await other.create("/routing/result", { configurationId: other.profile._id });
    const ownDelivery = await until("the other organization's own delivery", () => deliveriesTo("/other")[0], 60_000);
    expect(JSON.parse(ownDelivery.body).data.resultId).toBe(ownRun._id);
    expect(deliveriesTo("/other").every((entry) => JSON.parse(entry.body).data.organizationId === other.organizationId)).toBe(true);
    expect(deliveriesTo("/acme").every((entry) => JSON.parse(entry.body).data.organizationId === tenant.organizationId)).toBe(true);
  }, 150_000);

  it("retries a receiver that fails twice: three attempts with growing delays, the same webhook-id, then delivered", async () => {
    const tenant = await tenantWithFleet();
    scripted.set("/flaky", [500, 503]);
    const hook = (await tenant.create("/webhook", { url: `${receiver.url}/flaky`, events: ["routing.result.completed"] })) as {
      _id: string;
      secret: string;
    };
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
    const listed = await until(
      "the delivered record",
      async () => {
        const page = (await tenant.call("GET", `/webhook/${hook._id}/deliveries`)).body.data as Array<Record<string, unknown>>;
        return page[0]?.status === "delivered" ? page : undefined;
      },
      10_000,
    );
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      eventId: third.headers["webhook-id"],
      eventType: "routing.result.completed",
      status: "delivered",
      attempts: 3,
      lastResponseCode: 200,
      nextRetryAt: null,
    });
    // Another organization cannot read them.
    expect(refusal(await (await tenantWithFleet()).call("GET", `/webhook/${hook._id}/deliveries`))).toEqual({
      status: 404,
      failedCode: "sys-404",
    });
  }, 150_000);

  it("after a scheduled run delivers routing.result.completed, and routing.schedule.skipped (with the tick's reason) for the run over the plan's cap", async () => {
    const startedAt = Date.now();
    const tenant = await tenantWithFleet();
    // Its plan allows one run queued or running: of two schedules due in the same minute, the tick skips one.
    await putOnPlan(tenant.organizationId, "one-run");
    const hook = (await tenant.create("/webhook", {
      url: `${receiver.url}/scheduled`,
      events: ["routing.result.completed", "routing.schedule.skipped"],
    })) as { secret: string };
    const runAt = new Date(Math.ceil((Date.now() + 20_000) / 60_000) * 60_000);
    const [date, time] = runAt.toISOString().slice(0, 16).split("T") as [string, string];
    const schedules = [];
    for (const name of ["Hooked", "Hooked too"]) {
      schedules.push(
        await tenant.create("/routing/schedule", {
          name,
          configurationId: tenant.profile._id,
          periode: "byDate",
          schedules: [{ date, time: [time] }],
        }),
      );
    }
    const scheduleIds = schedules.map((schedule) => schedule._id as string);
    // EventBridge's tick for that minute, delivered now: the tick handles the minute its event names.
    await own.stack().tick(runAt);
    const byType = async (type: string) =>
      until(
        `the scheduled ${type} delivery`,
        () =>
          deliveriesTo("/scheduled")
            .map((delivery) => verified(hook.secret, delivery))
            .find((event) => event.type === type),
        150_000,
      );

    const completed = await byType("routing.result.completed");
    expect(completed.data).toMatchObject({
      organizationId: tenant.organizationId,
      hubId: tenant.hub._id,
      configurationId: tenant.profile._id,
      status: "done",
    });
    expect(scheduleIds).toContain(completed.data.scheduleId);
    const result = await tenant.call("GET", `/routing/result/${completed.data.resultId}`);
    expect(result.status).toBe(200);
    expect(result.body.data).toMatchObject({ _id: completed.data.resultId, scheduleId: completed.data.scheduleId, status: "done" });
    await expectDocumentedEvent(completed, startedAt);

    const skipped = await byType("routing.schedule.skipped");
    const skippedScheduleId = scheduleIds.find((id) => id !== completed.data.scheduleId);
    expect(skipped.data).toEqual({
      organizationId: tenant.organizationId,
      hubId: tenant.hub._id,
      scheduleId: skippedScheduleId,
      slot: expect.stringMatching(new RegExp(`^${date}T${time}`)),
      reason: scheduledRunOverCapReason(1),
    });
    // The ids fetch the rest: the skipped schedule's log says the same.
    const schedule = await tenant.call("GET", `/routing/schedule/${skippedScheduleId}`);
    expect(schedule.status).toBe(200);
    expect(JSON.stringify(schedule.body.data)).toContain(scheduledRunOverCapReason(1));
    await expectDocumentedEvent(skipped, startedAt, runAt.getTime());
  }, 180_000);

  it("delivers routing.result.dispatched when a result is dispatched, naming the result and its vehicles", async () => {
    const startedAt = Date.now();
    const tenant = await tenantWithFleet();
    const hook = (await tenant.create("/webhook", { url: `${receiver.url}/dispatched`, events: ["routing.result.dispatched"] })) as {
      secret: string;
    };
    const result = await tenant.create("/routing/result", { configurationId: tenant.profile._id });
    await until(
      "the run to finish",
      async () => ((await tenant.call("GET", `/routing/result/${result._id}`)).body.data.status === "done" ? true : undefined),
      60_000,
    );
    const dispatched = await tenant.call("POST", `/routing/result/${result._id}/dispatch`);
    expect(dispatched.status, JSON.stringify(dispatched.body)).toBe(200);

    const delivery = await until("the dispatched delivery", () => deliveriesTo("/dispatched")[0], 60_000);
    const event = verified(hook.secret, delivery);
    expect(event).toMatchObject({
      type: "routing.result.dispatched",
      data: {
        organizationId: tenant.organizationId,
        resultId: result._id,
        hubId: tenant.hub._id,
        configurationId: tenant.profile._id,
        scheduleId: null,
        vehicleIds: [tenant.vehicle._id],
      },
    });
    await expectDocumentedEvent(event, startedAt);
    // The ids fetch the rest: the result is dispatched, and its visits carry the vehicle.
    const read = await tenant.call("GET", `/routing/result/${result._id}`);
    expect(read.body.data.dispatch).toMatchObject({ vehicleIds: [tenant.vehicle._id] });
    // Only the subscribed type: the run's completion was not delivered here.
    expect(deliveriesTo("/dispatched")).toHaveLength(1);
  }, 150_000);

  it("delivers data-type.import.completed and data-type.import.failed when imports from the earlier version end", async () => {
    const startedAt = Date.now();
    const tenant = await tenantWithFleet();
    const hook = (await tenant.create("/webhook", {
      url: `${receiver.url}/imports`,
      events: ["data-type.import.completed", "data-type.import.failed"],
    })) as { secret: string };
    const byType = (type: string) =>
      until(
        `the ${type} delivery`,
        () =>
          deliveriesTo("/imports")
            .map((delivery) => verified(hook.secret, delivery))
            .find((event) => event.type === type),
        90_000,
      );

    const good = await startImport(tenant.call, legacyExport("Legacy parts", 25));
    const completed = await byType("data-type.import.completed");
    expect(completed.data).toEqual({
      organizationId: tenant.organizationId,
      dataTypeId: good.dataTypeId,
      importId: good.uploadId,
      processed: 25,
    });
    await expectDocumentedEvent(completed, startedAt);
    const type = await tenant.call("GET", `/data-type/${good.dataTypeId}`);
    expect(type.body.data_type).toMatchObject({ _id: good.dataTypeId, locked: false, import: { status: "done" } });

    // More records than the header announces: the import fails.
    const bad = await startImport(tenant.call, legacyExport("Legacy miscounted", 30, 20));
    const failed = await byType("data-type.import.failed");
    const failedType = await tenant.call("GET", `/data-type/${bad.dataTypeId}`);
    expect(failedType.body.data_type).toMatchObject({
      _id: bad.dataTypeId,
      import: { status: "failed", message: expect.stringMatching(/rolled back/) },
    });
    expect(failed.data).toEqual({
      organizationId: tenant.organizationId,
      dataTypeId: bad.dataTypeId,
      importId: bad.uploadId,
      message: failedType.body.data_type.import.message,
    });
    await expectDocumentedEvent(failed, startedAt);
    expect(deliveriesTo("/imports")).toHaveLength(2);
  }, 150_000);

  it("a receiver answering 410 Gone disables its subscription: later events are dropped unsent until it is enabled again", async () => {
    const tenant = await tenantWithFleet();
    scripted.set("/gone", [410]);
    const hook = (await tenant.create("/webhook", { url: `${receiver.url}/gone`, events: ["routing.result.completed"] })) as {
      _id: string;
      secret: string;
    };
    const first = await tenant.call("POST", `/webhook/${hook._id}/test`);
    expect(first.status).toBe(202);
    const disabled = await until(
      "the subscription disabled",
      async () => {
        const read = await tenant.call("GET", `/webhook/${hook._id}`);
        return read.body.data.enabled === false ? read.body.data : undefined;
      },
      30_000,
    );
    expect(disabled).toMatchObject({ enabled: false, disabledReason: "the receiver answered 410 Gone" });
    expect(deliveriesTo("/gone")).toHaveLength(1);
    const deliveries = async () =>
      (await tenant.call("GET", `/webhook/${hook._id}/deliveries`)).body.data as Array<Record<string, unknown>>;
    expect((await deliveries()).find((delivery) => delivery.eventId === first.body.data.eventId)).toMatchObject({
      status: "disabled",
      attempts: 1,
      lastResponseCode: 410,
      nextRetryAt: null,
    });

    // A run's completion and a test event while disabled: recorded as dropped, never sent.
    const run = await tenant.create("/routing/result", { configurationId: tenant.profile._id });
    await until(
      "the run to finish",
      async () => ((await tenant.call("GET", `/routing/result/${run._id}`)).body.data.status === "done" ? true : undefined),
      60_000,
    );
    const second = await tenant.call("POST", `/webhook/${hook._id}/test`);
    await until(
      "the test event dropped",
      async () =>
        (await deliveries()).find((delivery) => delivery.eventId === second.body.data.eventId)?.status === "dropped" ? true : undefined,
      30_000,
    );
    expect(deliveriesTo("/gone")).toHaveLength(1);

    // Enabled again, it receives the next event.
    expect((await tenant.call("PATCH", `/webhook/${hook._id}`, { enabled: true })).body.data).toMatchObject({
      enabled: true,
      disabledReason: null,
    });
    const third = await tenant.call("POST", `/webhook/${hook._id}/test`);
    const resumed = await until(
      "the delivery after enabling",
      () => deliveriesTo("/gone").find((delivery) => delivery.headers["webhook-id"] === third.body.data.eventId),
      30_000,
    );
    expect(verified(hook.secret, resumed)).toMatchObject({
      type: "webhook.test",
      data: { organizationId: tenant.organizationId, webhookId: hook._id },
    });
    expect(deliveriesTo("/gone")).toHaveLength(2);
  }, 150_000);

  it("GET /usage shows the organization's webhook delivery attempts, retries included", async () => {
    const tenant = await tenantWithFleet();
    scripted.set("/metered", [500]);
    const hook = (await tenant.create("/webhook", { url: `${receiver.url}/metered`, events: ["routing.result.completed"] })) as {
      _id: string;
    };
    const queued = await tenant.call("POST", `/webhook/${hook._id}/test`);
    await until(
      "the retried delivery",
      async () => {
        const page = (await tenant.call("GET", `/webhook/${hook._id}/deliveries`)).body.data as Array<Record<string, unknown>>;
        return page.find((delivery) => delivery.eventId === queued.body.data.eventId)?.status === "delivered" ? true : undefined;
      },
      30_000,
    );
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const usage = await tenant.call("GET", `/usage?from=${day(-1)}&to=${day(1)}`);
    expect(usage.status, JSON.stringify(usage.body)).toBe(200);
    expect(usage.body.data.totals.webhookAttempts).toBe(deliveriesTo("/metered").length);
    expect(usage.body.data.totals.webhookAttempts).toBe(2);
  }, 60_000);
});
