import { describe, expect, it } from "vitest";
import type { Caller } from "#shared/domain/caller";
import { type DomainEvent, eventReadPermission, eventTypes, hubOfEvent, scopeAdmits } from "#shared/domain/webhooks/events";
import type { WebhookRecord } from "#shared/domain/webhooks/schema";
import { mayManageWebhook } from "#shared/domain/webhooks/service";
import { eventsOfChange } from "#shared/domain/webhooks/state-changes";

const resultEvent = (hubId: string): DomainEvent => ({
  type: "routing.result.completed",
  timestamp: "2026-11-25T09:00:05.000Z",
  data: { organizationId: "acme", resultId: "a".repeat(24), hubId, configurationId: "c1", scheduleId: null, status: "done" },
});
const importEvent: DomainEvent = {
  type: "data-type.import.completed",
  timestamp: "2026-11-25T09:00:05.000Z",
  data: { organizationId: "acme", dataTypeId: "d1", importId: "u1", processed: 3 },
};
const skipped = (hubId: string | null): DomainEvent => ({
  type: "routing.schedule.skipped",
  timestamp: "2026-11-25T09:00:05.000Z",
  data: { organizationId: "acme", scheduleId: "s1", hubId, slot: "2026-11-25T09:00Z", reason: "cap" },
});

const caller = (userId: string, hubIds: string[], permissions: string[]): Caller => ({
  userId,
  organizationId: "acme",
  hubIds,
  permissions: new Set(permissions),
  permissionDetails: [],
});
const record = (createdBy: string | undefined): WebhookRecord => ({
  _id: "b".repeat(24),
  organizationId: "acme",
  url: "https://example.com/hook",
  events: ["routing.result.completed"],
  description: null,
  enabled: true,
  disabledReason: null,
  sealedSecret: "sealed",
  ...(createdBy ? { createdBy, hubIds: ["h2"] } : {}),
  createdTime: "2026-11-25T09:00:00.000000Z",
  updatedTime: "2026-11-25T09:00:00.000000Z",
});

describe("Subscriptions see what their creator may read", () => {
  it("maps every event type to the view slug of its module", () => {
    expect(Object.keys(eventReadPermission).sort()).toEqual([...eventTypes].sort());
    expect(eventReadPermission["routing.result.dispatched"]).toBe("view/routing-result");
    expect(eventReadPermission["routing.schedule.skipped"]).toBe("view/routing-schedule");
    expect(eventReadPermission["data-type.import.failed"]).toBe("view/data-type");
  });

  it("a hub-scoped subscription receives its hubs' events only, never organization-wide ones", () => {
    expect(scopeAdmits(["h2"], resultEvent("h2"))).toBe(true);
    expect(scopeAdmits(["h2"], resultEvent("h1"))).toBe(false);
    expect(scopeAdmits(["h2"], importEvent)).toBe(false);
    expect(scopeAdmits(["h2"], skipped("h2"))).toBe(true);
    expect(scopeAdmits(["h2"], skipped(null))).toBe(false);
    expect(hubOfEvent(importEvent)).toBeNull();
  });

  it("an organization-wide subscription (empty scope, or none stored) receives every event", () => {
    for (const scope of [[], undefined]) {
      expect(scopeAdmits(scope, resultEvent("h1"))).toBe(true);
      expect(scopeAdmits(scope, importEvent)).toBe(true);
      expect(scopeAdmits(scope, skipped(null))).toBe(true);
    }
  });

  it("only the creator, or an organization-wide caller holding edit/webhook, manages a subscription; one without a creator only the latter", () => {
    const admin = caller("admin", [], ["edit/webhook"]);
    const owner = caller("u2", ["h2"], ["edit/webhook"]);
    const stranger = caller("u3", ["h2"], ["edit/webhook"]);
    const unrestrictedWithoutEdit = caller("u4", [], ["delete/webhook"]);
    expect(mayManageWebhook(owner, record("u2"))).toBe(true);
    expect(mayManageWebhook(admin, record("u2"))).toBe(true);
    expect(mayManageWebhook(stranger, record("u2"))).toBe(false);
    expect(mayManageWebhook(unrestrictedWithoutEdit, record("u2"))).toBe(false);
    expect(mayManageWebhook(admin, record(undefined))).toBe(true);
    expect(mayManageWebhook(owner, record(undefined))).toBe(false);
  });
});

describe("Dispatch events", () => {
  const done = {
    entity: "routingResult",
    _id: "a".repeat(24),
    organizationId: "acme",
    hubId: "h1",
    configurationId: "c1",
    scheduleId: null,
    status: "done",
    finishedTime: "2026-11-25 09:00:05",
    dispatch: null,
  };
  const at = new Date("2026-11-25T09:02:00Z");
  const dispatch = (dispatchId: string, vehicleIds: string[], lastVehicleIds: string[]) => ({
    dispatchedTime: "2026-11-25 09:01:00",
    vehicleIds,
    dispatchId,
    lastVehicleIds,
    success: 2,
    failed: 0,
  });

  it("two dispatches in the same second are two events with distinct ids, each naming its own vehicles", () => {
    const first = { ...done, dispatch: dispatch("d1", ["v1"], ["v1"]) };
    const second = { ...first, dispatch: dispatch("d2", ["v1", "v2"], ["v2"]) };
    const [one] = eventsOfChange(done, first, at);
    const [two] = eventsOfChange(first, second, at);
    expect(one?.event).toMatchObject({ type: "routing.result.dispatched", data: { vehicleIds: ["v1"] } });
    expect(two?.event).toMatchObject({ type: "routing.result.dispatched", data: { vehicleIds: ["v2"] } });
    expect(one?.id).not.toBe(two?.id);
    // The same change read twice (a replayed stream record) has the same id.
    expect(eventsOfChange(first, second, new Date())[0]?.id).toBe(two?.id);
  });

  it("a write that keeps the dispatch id is no new dispatch", () => {
    const first = { ...done, dispatch: dispatch("d1", ["v1"], ["v1"]) };
    expect(eventsOfChange(first, { ...first, name: "renamed" }, at)).toEqual([]);
  });
});
