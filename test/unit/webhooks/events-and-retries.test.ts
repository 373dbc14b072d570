import { describe, expect, it } from "vitest";
import { apiDescription, routes } from "#functions/routes";
import { eventSchemas, eventTypes } from "#shared/domain/webhooks/events";
import {
  classifyAnswer,
  defaultRetryScheduleSeconds,
  hopToward,
  MAX_SQS_DELAY_SECONDS,
  nextAttempt,
  parseRetrySchedule,
} from "#shared/domain/webhooks/delivery";
import { eventsOfChange } from "#shared/domain/webhooks/state-changes";
import { plainImage } from "#shared/domain/webhooks/stream-image";
import { webhookUrlProblem } from "#shared/domain/webhooks/service";
import { buildOpenApiDocument } from "#shared/http/openapi";
import { inlineRefs } from "#test/support/openapi-refs";

const at = new Date("2026-11-25T09:00:00Z");
const result = {
  entity: "routingResult",
  _id: "a".repeat(24),
  organizationId: "acme",
  hubId: "h1",
  configurationId: "c1",
  scheduleId: null,
  status: "ongoing",
  dispatch: null,
  finishedTime: null,
};

describe("Events from state changes", () => {
  it("a result turning done is routing.result.completed, valid by its schema; the same change always has the same id", () => {
    const done = { ...result, status: "done", finishedTime: "2026-11-25 09:00:05" };
    const [event, ...rest] = eventsOfChange(result, done, at);
    expect(rest).toEqual([]);
    expect(event?.event).toEqual({
      type: "routing.result.completed",
      timestamp: "2026-11-25T09:00:05.000Z",
      data: { organizationId: "acme", resultId: result._id, hubId: "h1", configurationId: "c1", scheduleId: null, status: "done" },
    });
    expect(eventSchemas["routing.result.completed"].safeParse(event?.event).success).toBe(true);
    expect(eventsOfChange(result, done, new Date())[0]?.id).toBe(event?.id);
  });

  it("writes that change nothing an event names mean no event", () => {
    const done = { ...result, status: "done", finishedTime: "2026-11-25 09:00:05" };
    expect(eventsOfChange(done, { ...done, name: "renamed" }, at)).toEqual([]);
    expect(eventsOfChange(undefined, result, at)).toEqual([]);
    expect(eventsOfChange(result, undefined, at)).toEqual([]);
    expect(eventsOfChange(undefined, { entity: "vehicle", organizationId: "acme" }, at)).toEqual([]);
  });

  it("a failed run, a dispatch, a skipped slot and an ended import each mean their event", () => {
    const failed = eventsOfChange(result, { ...result, status: "failed", message: "no vehicles", finishedTime: "2026-11-25 09:00:05" }, at);
    expect(failed.map((stored) => stored.event.type)).toEqual(["routing.result.failed"]);
    const done = { ...result, status: "done", finishedTime: "2026-11-25 09:00:05" };
    const dispatched = eventsOfChange(
      done,
      { ...done, dispatch: { dispatchedTime: "2026-11-25 09:01:00", vehicleIds: ["v1"], success: 3, failed: 0 } },
      at,
    );
    expect(dispatched.map((stored) => stored.event)).toEqual([
      expect.objectContaining({ type: "routing.result.dispatched", data: expect.objectContaining({ vehicleIds: ["v1"] }) }),
    ]);
    const claim = {
      entity: "runClaim",
      status: "ENQUEUED",
      message: { organizationId: "acme", scheduleId: "s1", slot: "2026-11-25T09:00:00.000Z" },
    };
    const skipped = eventsOfChange(
      claim,
      { ...claim, status: "SKIPPED", outcome: "5 runs already active", finishedAt: "2026-11-25T09:00:01.000Z" },
      at,
    );
    expect(skipped[0]?.event).toMatchObject({
      type: "routing.schedule.skipped",
      data: { scheduleId: "s1", reason: "5 runs already active" },
    });
    const dataType = {
      entity: "dataType",
      _id: "d1",
      organizationId: "acme",
      import: { phase: "finishing", uploadId: "u1", processed: 10 },
    };
    const imported = eventsOfChange(
      dataType,
      { ...dataType, import: { ...dataType.import, phase: "done", finishedTime: "2026-11-25T09:02:00.000Z" } },
      at,
    );
    expect(imported[0]?.event).toMatchObject({
      type: "data-type.import.completed",
      data: { dataTypeId: "d1", importId: "u1", processed: 10 },
    });
    for (const stored of [...failed, ...dispatched, ...skipped, ...imported])
      expect(eventSchemas[stored.event.type].safeParse(stored.event).success, stored.event.type).toBe(true);
  });

  it("reads stream images (DynamoDB typed JSON)", () => {
    expect(
      plainImage({ a: { S: "x" }, n: { N: "1.5" }, b: { BOOL: true }, z: { NULL: true }, m: { M: { l: { L: [{ S: "y" }] } } } }),
    ).toEqual({ a: "x", n: 1.5, b: true, z: null, m: { l: ["y"] } });
  });
});

describe("Retry schedule", () => {
  it("defaults to 8 attempts over about a day, and grows", () => {
    expect(defaultRetryScheduleSeconds).toHaveLength(7);
    const total = defaultRetryScheduleSeconds.reduce((sum, delay) => sum + delay, 0);
    expect(total).toBeGreaterThan(20 * 3600);
    expect(total).toBeLessThan(30 * 3600);
    expect(nextAttempt(defaultRetryScheduleSeconds, 1)).toEqual({ delaySeconds: 5 });
    expect(nextAttempt(defaultRetryScheduleSeconds, 8)).toEqual({ exhausted: true });
  });

  it("is configurable and refuses nonsense", () => {
    expect(parseRetrySchedule("1, 3,6")).toEqual([1, 3, 6]);
    expect(parseRetrySchedule(undefined)).toEqual([...defaultRetryScheduleSeconds]);
    expect(() => parseRetrySchedule("1,-2")).toThrow();
    expect(() => parseRetrySchedule("x")).toThrow();
  });

  it("waits beyond SQS's 15-minute delay by hops", () => {
    expect(hopToward(new Date(at.getTime() + 60_000), at)).toEqual({ delaySeconds: 60 });
    expect(hopToward(new Date(at.getTime() + 7_200_000), at)).toEqual({
      delaySeconds: MAX_SQS_DELAY_SECONDS,
      notBefore: new Date(at.getTime() + 7_200_000).toISOString(),
    });
  });

  it("counts 2xx as delivered and 410 as gone; anything else is retried", () => {
    expect(classifyAnswer(204).kind).toBe("delivered");
    expect(classifyAnswer(410).kind).toBe("gone");
    expect(classifyAnswer(301).kind).toBe("failed");
    expect(classifyAnswer(500).kind).toBe("failed");
  });
});

describe("Webhook URLs", () => {
  it("are https to public hosts; loopback (http or https) only when allowed", () => {
    expect(webhookUrlProblem("https://hooks.example.com/x", false)).toBeUndefined();
    expect(webhookUrlProblem("http://hooks.example.com/x", false)).toBeDefined();
    expect(webhookUrlProblem("http://hooks.example.com/x", true)).toBeDefined();
    // Refused without the local switch, naming it.
    expect(webhookUrlProblem("http://127.0.0.1:9000/x", false)).toContain("WEBHOOKS_ALLOW_LOOPBACK=true");
    expect(webhookUrlProblem("https://127.0.0.1:9000/x", false)).toContain("WEBHOOKS_ALLOW_LOOPBACK=true");
    expect(webhookUrlProblem("http://hooks.example.com/x", false)).not.toContain("WEBHOOKS_ALLOW_LOOPBACK");
    expect(webhookUrlProblem("http://127.0.0.1:9000/x", true)).toBeUndefined();
    expect(webhookUrlProblem("https://10.0.0.1/x", true)).toBeDefined();
  });
});

describe("OpenAPI webhooks section", () => {
  it("has one operation per event type and for webhook.test, its body the event's named schema", () => {
    const document = buildOpenApiDocument(routes, { title: "t", version: "3", description: apiDescription });
    expect(Object.keys(document.webhooks).sort()).toEqual([...eventTypes, "webhook.test"].sort());
    const bodyOf = (type: string) =>
      (document.webhooks[type] as { post: { requestBody: { content: { "application/json": { schema: { $ref?: string } } } } } }).post
        .requestBody.content["application/json"].schema;
    expect(bodyOf("routing.result.completed")).toEqual({ $ref: "#/components/schemas/RoutingResultCompletedEvent" });
    expect(inlineRefs(document, bodyOf("routing.result.completed")).properties.type.const).toBe("routing.result.completed");
    expect(bodyOf("webhook.test")).toEqual({ $ref: "#/components/schemas/WebhookTestEvent" });
    const testEvent = inlineRefs(document, bodyOf("webhook.test"));
    expect(testEvent.properties.type.const).toBe("webhook.test");
    expect(testEvent.properties.data.required).toEqual(["organizationId", "webhookId"]);
  });
});
