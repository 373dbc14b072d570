import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { eventSchemas, eventTypes } from "#shared/domain/webhooks/events";
import { newSigningSecret, signDelivery, verifyDelivery } from "#shared/domain/webhooks/signing";

const body = JSON.stringify({ type: "routing.result.completed", timestamp: "2026-11-25T09:00:00.000Z", data: { organizationId: "acme" } });

describe("Standard Webhooks signing", () => {
  it("produces headers the standardwebhooks package verifies", () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const headers = signDelivery(secret, "evt_1", new Date(), body);
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(verifyDelivery(secret, headers, body, new Date())).toBe(true);
  });

  it("fails verification with another secret, another body or another id", () => {
    const secret = newSigningSecret();
    const headers = signDelivery(secret, "evt_1", new Date(), body);
    expect(() => new Webhook(newSigningSecret()).verify(body, { ...headers })).toThrow();
    expect(() => new Webhook(secret).verify(`${body} `, { ...headers })).toThrow();
    expect(() => new Webhook(secret).verify(body, { ...headers, "webhook-id": "evt_2" })).toThrow();
    expect(verifyDelivery(newSigningSecret(), headers, body, new Date())).toBe(false);
  });

  it("signs the attempt's time: an old timestamp is refused by the receiver's tolerance", () => {
    const secret = newSigningSecret();
    const headers = signDelivery(secret, "evt_1", new Date(Date.now() - 10 * 60_000), body);
    expect(() => new Webhook(secret).verify(body, { ...headers })).toThrow();
    expect(verifyDelivery(secret, headers, body, new Date())).toBe(false);
  });

  it("has one schema per event type, each refusing another type's payload", () => {
    expect(Object.keys(eventSchemas).sort()).toEqual([...eventTypes].sort());
    const completed = {
      type: "routing.result.completed",
      timestamp: "2026-11-25T09:00:00.000Z",
      data: {
        organizationId: "acme",
        resultId: "a".repeat(24),
        hubId: "b".repeat(24),
        configurationId: "c".repeat(24),
        scheduleId: null,
        status: "done",
      },
    };
    expect(eventSchemas["routing.result.completed"].safeParse(completed).success).toBe(true);
    expect(eventSchemas["routing.result.failed"].safeParse(completed).success).toBe(false);
  });
});
