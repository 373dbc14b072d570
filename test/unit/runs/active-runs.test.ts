import { describe, expect, it } from "vitest";
import { AppError } from "#shared/domain/errors";
import {
  endedLeases,
  leaseEnd,
  mayTakeSlot,
  onDemandRunKey,
  planSlotTake,
  scheduleRunKey,
  TooManyActiveRunsError,
} from "#shared/domain/runs/active-runs";

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

  it("several runs at once: the first that fit are taken, held runs keep their slot, ended leases make room", () => {
    expect(planSlotTake({}, ["a", "b", "c"], 2, now)).toEqual({ held: [], taken: ["a", "b"], ended: [] });
    expect(planSlotTake({ x: live }, ["a", "b", "c"], 3, now)).toEqual({ held: [], taken: ["a", "b"], ended: [] });
    // A resent run holds its slot already: kept even at the cap, and it takes no second one.
    expect(planSlotTake({ a: live, x: live }, ["a", "b"], 2, now)).toEqual({ held: ["a"], taken: [], ended: [] });
    expect(planSlotTake({ x: ended, y: live }, ["a", "b"], 2, now)).toEqual({ held: [], taken: ["a"], ended: ["x"] });
    // A run asked for whose own lease ended is held (renewed), not removed.
    expect(planSlotTake({ a: ended }, ["a"], 1, now)).toEqual({ held: ["a"], taken: [], ended: [] });
    expect(planSlotTake({ x: live, y: live }, ["a"], 2, now)).toEqual({ held: [], taken: [], ended: [] });
    expect(planSlotTake({ a: live }, ["a", "a", "b"], 5, now).taken).toEqual(["b"]);
  });

  it("several runs at once: at most `removeAtMost` ended leases are removed, and only the room they make is counted", () => {
    const runs = { x: ended, y: ended, z: ended, w: live };
    expect(planSlotTake(runs, ["a", "b", "c"], 4, now, 1)).toEqual({ held: [], taken: ["a"], ended: ["x"] });
    expect(planSlotTake(runs, ["a", "b", "c"], 3, now, 1)).toEqual({ held: [], taken: [], ended: ["x"] });
    expect(planSlotTake(runs, ["a", "b", "c"], 4, now)).toEqual({ held: [], taken: ["a", "b", "c"], ended: ["x", "y", "z"] });
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
