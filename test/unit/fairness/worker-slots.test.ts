import { describe, expect, it } from "vitest";
import {
  deferralDelaySeconds,
  MAX_DEFER_SECONDS,
  sharedQueueRoom,
  type TenantWorkerSlots,
  tenantSlotCap,
  workInTenantSlot,
} from "#shared/domain/fairness/worker-slots";

/** Slots held in memory under the same rule the store enforces (at most `cap` per tenant). */
function memorySlots(cap: number): TenantWorkerSlots & { held: Map<string, Set<string>> } {
  const held = new Map<string, Set<string>>();
  return {
    held,
    take: async (tenant, key) => {
      const slots = held.get(tenant) ?? new Set<string>();
      if (!slots.has(key) && slots.size >= cap) return false;
      held.set(tenant, slots.add(key));
      return true;
    },
    release: async (tenant, key) => {
      held.get(tenant)?.delete(key);
    },
  };
}

describe("Module: worker slots per tenant", () => {
  it("a tenant may hold every worker but one, and at least one", () => {
    expect(tenantSlotCap(20)).toBe(19);
    expect(tenantSlotCap(2)).toBe(1);
    expect(tenantSlotCap(1)).toBe(1);
    expect(tenantSlotCap(20, 5)).toBe(15);
  });

  it("spillover: new runs go to the shared queue only up to the tenant's share of active runs; the rest spill", () => {
    // A flood of 50 with none active: 3 shared, 47 spilled.
    expect(sharedQueueRoom(0, 50, 3)).toBe(3);
    // One at a time, as POST /routing/result enqueues: the 1st to 3rd fit, the 4th and later spill.
    expect([0, 1, 2, 3, 10].map((active) => sharedQueueRoom(active, 1, 3))).toEqual([1, 1, 1, 0, 0]);
    // Partly room; never negative when the tenant is already over its share.
    expect(sharedQueueRoom(2, 5, 3)).toBe(1);
    expect(sharedQueueRoom(7, 5, 3)).toBe(0);
    expect(sharedQueueRoom(0, 0, 3)).toBe(0);
  });

  it("deferrals back off from 5 s, doubling, up to a minute (never over SQS's 15-minute delay), with jitter of ±20 %", () => {
    expect(deferralDelaySeconds(0, 5, () => 0.5)).toBe(5);
    expect(deferralDelaySeconds(3, 5, () => 0.5)).toBe(40);
    expect(deferralDelaySeconds(20, 5, () => 0.5)).toBe(60);
    expect(deferralDelaySeconds(20, 5, () => 0.999)).toBe(60);
    expect(deferralDelaySeconds(20, 5, () => 0.999, 5000)).toBe(MAX_DEFER_SECONDS);
    expect(deferralDelaySeconds(2, 5, () => 0)).toBe(16);
    expect(deferralDelaySeconds(2, 5, () => 1)).toBe(24);
  });

  it("works a message in a slot and frees it afterwards, even when the work throws", async () => {
    const slots = memorySlots(1);
    const outcome = await workInTenantSlot(
      slots,
      { tenantId: "a", workKey: "run-1", deferrals: 0 },
      async () => "done",
      async () => {
        throw new Error("not deferred");
      },
    );
    expect(outcome).toEqual({ started: true, value: "done" });
    expect(slots.held.get("a")?.size).toBe(0);
    await expect(
      workInTenantSlot(
        slots,
        { tenantId: "a", workKey: "run-2", deferrals: 0 },
        async () => Promise.reject(new Error("boom")),
        async () => undefined,
      ),
    ).rejects.toThrow("boom");
    expect(slots.held.get("a")?.size).toBe(0);
  });

  it("defers, without working, a message of a tenant at its cap; another tenant's message still starts", async () => {
    const slots = memorySlots(1);
    await slots.take("a", "running");
    const deferred: number[] = [];
    let worked = false;
    const outcome = await workInTenantSlot(
      slots,
      { tenantId: "a", workKey: "run-2", deferrals: 1 },
      async () => {
        worked = true;
      },
      async (delay) => {
        deferred.push(delay);
      },
    );
    expect(outcome.started).toBe(false);
    expect(worked).toBe(false);
    expect(deferred).toHaveLength(1);
    expect(deferred[0]).toBeGreaterThanOrEqual(8);
    expect(
      (
        await workInTenantSlot(
          slots,
          { tenantId: "b", workKey: "run-3", deferrals: 0 },
          async () => 1,
          async () => undefined,
        )
      ).started,
    ).toBe(true);
  });
});
