import { describe, expect, it } from "vitest";
import type { RoutingRunMessage } from "#shared/domain/runs/messages";
import { type DueEntry, runSchedulerTick, type SchedulerTickPorts } from "#shared/domain/runs/scheduler-tick";

const now = new Date("2026-12-01T07:00:30Z");

function fakePorts(due: DueEntry[][], overrides: Partial<SchedulerTickPorts> = {}) {
  const calls = { claimed: [] as string[], released: [] as string[], advanced: [] as string[], missed: [] as string[], listed: 0, sent: [] as string[] };
  const claims = new Set<string>();
  const ports: SchedulerTickPorts = {
    shardCount: due.length,
    listDue: async (shard, _notAfter, limit, cursor) => {
      calls.listed++;
      const start = Number(cursor ?? 0);
      const items = (due[shard] ?? []).slice(start, start + limit);
      const next = start + items.length;
      return { items, nextCursor: next < (due[shard] ?? []).length ? String(next) : null };
    },
    readSchedule: async (_o, _id) => ({ updatedTime: "2026-11-30 10:00:00", nextRunAt: null }),
    claimSlot: async (m) => {
      const key = `${m.scheduleId}#${m.slot}`;
      if (claims.has(key)) return false;
      claims.add(key);
      calls.claimed.push(m.scheduleId);
      return true;
    },
    releaseSlot: async (m) => {
      calls.released.push(m.scheduleId);
    },
    enqueue: async (messages) => {
      calls.sent.push(...messages.map((m) => m.scheduleId));
      return [];
    },
    advance: async (_o, id) => {
      calls.advanced.push(id);
    },
    recordMissed: async (_o, id) => {
      calls.missed.push(id);
    },
    ...overrides,
  };
  return { ports, calls };
}

const entry = (scheduleId: string, nextRunAt = "2026-12-01T07:00:00.000Z"): DueEntry => ({ organizationId: "o", scheduleId, nextRunAt });
const readBack = (entries: DueEntry[]) => async (_o: string, id: string) => ({
  updatedTime: "t",
  nextRunAt: entries.find((e) => e.scheduleId === id)?.nextRunAt ?? null,
});

describe("Function: runSchedulerTick", () => {
  it("claims, enqueues in batches of at most 10, then advances every due schedule of every shard", async () => {
    const shards = [Array.from({ length: 12 }, (_, i) => entry(`a${i}`)), [entry("b0")]];
    const batches: number[] = [];
    const { ports, calls } = fakePorts(shards, {
      readSchedule: readBack(shards.flat()),
      enqueue: async (messages) => {
        batches.push(messages.length);
        return [];
      },
    });
    const outcome = await runSchedulerTick(ports, now);
    expect(outcome.enqueued).toHaveLength(13);
    expect(Math.max(...batches)).toBeLessThanOrEqual(10);
    expect(calls.advanced.sort()).toEqual(shards.flat().map((e) => e.scheduleId).sort());
    expect(outcome.enqueued[0]).toMatchObject({ slot: "2026-12-01T07:00Z", scheduledFor: "2026-12-01T07:00:00.000Z" });
  });

  it("releases the claim and does not advance when a message could not be sent, so the next tick retries", async () => {
    const shards = [[entry("ok"), entry("lost")]];
    const { ports, calls } = fakePorts(shards, {
      readSchedule: readBack(shards.flat()),
      enqueue: async (messages: RoutingRunMessage[]) => messages.filter((m) => m.scheduleId === "lost"),
    });
    const outcome = await runSchedulerTick(ports, now);
    expect(outcome.failed).toBe(1);
    expect(calls.released).toEqual(["lost"]);
    expect(calls.advanced).toEqual(["ok"]);
  });

  it("does not enqueue a slot that is claimed already (a second tick for the same minute)", async () => {
    const shards = [[entry("s1")]];
    const { ports } = fakePorts(shards, { readSchedule: readBack(shards.flat()) });
    expect((await runSchedulerTick(ports, now)).enqueued).toHaveLength(1);
    const second = await runSchedulerTick(ports, now);
    expect(second.enqueued).toHaveLength(0);
    expect(second.alreadyClaimed).toBe(1);
  });

  it("skips a schedule changed or deleted after the index was read", async () => {
    const shards = [[entry("changed"), entry("deleted")]];
    const { ports, calls } = fakePorts(shards, {
      readSchedule: async (_o, id) => (id === "changed" ? { updatedTime: "t", nextRunAt: "2026-12-02T07:00:00.000Z" } : undefined),
    });
    expect((await runSchedulerTick(ports, now)).enqueued).toHaveLength(0);
    expect(calls.claimed).toEqual([]);
  });

  it("records and advances, without running, a slot missed by more than the allowed lateness", async () => {
    const shards = [[entry("old", "2026-12-01T05:00:00.000Z"), entry("recent", "2026-12-01T06:30:00.000Z")]];
    const { ports, calls } = fakePorts(shards, { readSchedule: readBack(shards.flat()) });
    const outcome = await runSchedulerTick(ports, now, { maxPerShard: 500, maxLatenessMs: 60 * 60_000 });
    expect(calls.missed).toEqual(["old"]);
    expect(outcome.enqueued.map((m) => m.scheduleId)).toEqual(["recent"]);
    expect(calls.advanced.sort()).toEqual(["old", "recent"]);
  });

  it("reads at most maxPerShard due entries per shard and tick", async () => {
    const shards = [Array.from({ length: 250 }, (_, i) => entry(`s${i}`))];
    const { ports } = fakePorts(shards, { readSchedule: readBack(shards.flat()) });
    const outcome = await runSchedulerTick(ports, now, { maxPerShard: 120, maxLatenessMs: 3_600_000 });
    expect(outcome.enqueued).toHaveLength(120);
  });
});
