import { describe, expect, it } from "vitest";
import { AppError } from "#shared/domain/errors";
import { endedLeases, leaseEnd, mayTakeSlot, onDemandRunKey, scheduleRunKey, TooManyActiveRunsError } from "#shared/domain/runs/active-runs";

const now = new Date("2026-12-01T07:00:00Z");
const live = now.getTime() + 60_000;
const ended = now.getTime() - 1;

describe("Domain: cap on an organization's active runs", () => {
  it("keys a scheduled run by its schedule and slot, an on-demand run by its result, without collisions", () => {
    expect(scheduleRunKey("s1", "2026-12-01T07:00Z")).toBe("S#s1#2026-12-01T07:00Z");
    expect(onDemandRunKey("r1")).toBe("R#r1");
    expect(scheduleRunKey("r1", "x")).not.toBe(onDemandRunKey("r1"));
  });

  it("a lease ends leaseSeconds after now", () => {
    expect(leaseEnd(now, 3600)).toBe(now.getTime() + 3_600_000);
  });

  it("lets a run take a slot only below the cap of live leases; ended leases do not count", () => {
    expect(mayTakeSlot({}, "a", 1, now)).toBe(true);
    expect(mayTakeSlot({ b: live }, "a", 1, now)).toBe(false);
    expect(mayTakeSlot({ b: ended }, "a", 1, now)).toBe(true);
    expect(mayTakeSlot({ a: live, b: live, c: live, d: live, e: live }, "f", 5, now)).toBe(false);
    expect(mayTakeSlot({ a: live, b: live, c: live, d: live }, "f", 5, now)).toBe(true);
  });

  it("a run holding a slot keeps it at the cap (a resent or renewed run is not refused)", () => {
    expect(mayTakeSlot({ a: live, b: live }, "a", 2, now)).toBe(true);
  });

  it("lists the ended leases (a lease ending exactly now has ended)", () => {
    expect(endedLeases({ a: live, b: ended, c: now.getTime() }, now).sort()).toEqual(["b", "c"]);
  });

  it("over the cap on demand is a 429 with the product's error shape and failedCode run-429", () => {
    const error = new TooManyActiveRunsError(5);
    expect(error).toBeInstanceOf(AppError);
    expect(error.statusCode).toBe(429);
    expect(error.failedCode).toBe("run-429");
    expect(error.message).toContain("5 routing runs");
  });
});
