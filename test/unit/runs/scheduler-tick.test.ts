import { describe, expect, it } from "vitest";
import type { DuePageMessage, RoutingRunMessage } from "#shared/domain/runs/messages";
import {
  type DueEntry,
  handleDueEntries,
  runSchedulerTick,
  type SchedulerTickPorts,
  type TickScheduleView,
} from "#shared/domain/runs/scheduler-tick";

const now = new Date("2026-12-01T07:00:30Z");

type ReadOne = (organizationId: string, scheduleId: string) => Promise<TickScheduleView | undefined>;

/** `readSchedule` (one schedule) stands for the batch read, which the fake answers one by one; `batches` counts its calls. */
function fakePorts(due: DueEntry[][], { readSchedule, ...overrides }: Partial<SchedulerTickPorts> & { readSchedule?: ReadOne } = {}) {
  const calls = {
    reads: [] as number[],
    claimed: [] as string[],
    released: [] as string[],
    advanced: [] as string[],
    missed: [] as string[],
    listed: 0,
    sent: [] as string[],
    pages: [] as DuePageMessage[],
    taken: [] as string[],
    takeCalls: 0,
    capReads: [] as string[][],
    freed: [] as string[],
    overCap: [] as string[],
  };
  /** Claim items by `scheduleId#slot`, like the conditional put/update/delete of the real store. */
  const claims = new Map<string, { status: string; claimedAt: string }>();
  const ports: SchedulerTickPorts = {
    shardCount: due.length,
    listDue: async (shard, _notAfter, limit, cursor) => {
      calls.listed++;
      const start = Number(cursor ?? 0);
      const items = (due[shard] ?? []).slice(start, start + limit);
      const next = start + items.length;
      return { items, nextCursor: next < (due[shard] ?? []).length ? String(next) : null };
    },
    readSchedules: async (entries) => {
      calls.reads.push(entries.length);
      const one: ReadOne = readSchedule ?? (async () => ({ updatedTime: "2026-11-30 10:00:00", nextRunAt: null }));
      return Promise.all(entries.map((e) => one(e.organizationId, e.scheduleId)));
    },
    claimSlot: async (m) => {
      const key = `${m.scheduleId}#${m.slot}`;
      if (claims.has(key)) return false;
      claims.set(key, { status: "ENQUEUED", claimedAt: clock.now.toISOString() });
      calls.claimed.push(m.scheduleId);
      return true;
    },
    readClaim: async (_o, id, slot) => claims.get(`${id}#${slot}`),
    releaseSlot: async (m) => {
      const key = `${m.scheduleId}#${m.slot}`;
      if (claims.get(key)?.status === "ENQUEUED") claims.delete(key);
      calls.released.push(m.scheduleId);
    },
    enqueue: async (messages) => {
      calls.sent.push(...messages.map((m) => m.scheduleId));
      return [];
    },
    enqueuePages: async (pages) => {
      calls.pages.push(...pages);
    },
    advance: async (_o, id) => {
      calls.advanced.push(id);
    },
    recordMissed: async (_o, id) => {
      calls.missed.push(id);
    },
    capsOf: async (organizationIds) => {
      calls.capReads.push(organizationIds);
      return new Map(organizationIds.map((id) => [id, 5]));
    },
    takeActiveRuns: async (_o, messages) => {
      calls.takeCalls++;
      calls.taken.push(...messages.map((m) => m.scheduleId));
      return messages;
    },
    releaseActiveRun: async (m) => {
      calls.freed.push(m.scheduleId);
    },
    skipOverCap: async (m) => {
      calls.overCap.push(m.scheduleId);
      const claim = claims.get(`${m.scheduleId}#${m.slot}`);
      if (claim) claim.status = "SKIPPED";
    },
    ...overrides,
  };
  return { ports, calls, claims };
}

/** The time claims are stamped with (the tick's event time). */
const clock = { now };

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
    expect(calls.advanced.sort()).toEqual(
      shards
        .flat()
        .map((e) => e.scheduleId)
        .sort(),
    );
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
    expect(calls.freed).toEqual(["lost"]);
    expect(calls.advanced).toEqual(["ok"]);
  });

  it("a second tick for the same minute does not enqueue again; it advances a slot a worker took whose schedule still points at it", async () => {
    // The schedule read back still points at the slot, as after a tick that died between sending and advancing.
    const shards = [[entry("s1")]];
    const { ports, calls, claims } = fakePorts(shards, { readSchedule: readBack(shards.flat()) });
    expect((await runSchedulerTick(ports, now)).enqueued).toHaveLength(1);
    // Moments later the claim is still ENQUEUED: another tick may be at work on it, so it is left alone.
    expect(await runSchedulerTick(ports, now)).toMatchObject({ enqueued: [], alreadyClaimed: 1 });
    // Once a worker took the message, a tick that finds the schedule not advanced only advances it.
    const claim = claims.get("s1#2026-12-01T07:00Z");
    if (claim) claim.status = "RUNNING";
    const third = await runSchedulerTick(ports, now);
    expect(third).toMatchObject({ enqueued: [], advancedLate: 1 });
    expect(calls.sent).toEqual(["s1"]);
    expect(calls.advanced).toEqual(["s1", "s1"]);
  });

  it("reads the schedules 100 per batch read and hands the schedule as read to the advance", async () => {
    const shards = [Array.from({ length: 230 }, (_, i) => entry(`s${i}`))];
    const seen: Array<TickScheduleView | undefined> = [];
    const { ports, calls } = fakePorts(shards, {
      readSchedule: readBack(shards.flat()),
      advance: async (_o, id, _handled, schedule) => {
        calls.advanced.push(id);
        seen.push(schedule);
      },
    });
    expect((await runSchedulerTick(ports, now)).enqueued).toHaveLength(230);
    expect(calls.reads).toEqual([100, 100, 30]);
    expect(seen.every((schedule) => schedule?.nextRunAt === "2026-12-01T07:00:00.000Z")).toBe(true);
  });

  it("leaves alone a slot another tick claimed moments ago and has not sent yet", async () => {
    const shards = [[entry("s1")]];
    const { ports, calls, claims } = fakePorts(shards, { readSchedule: readBack(shards.flat()) });
    claims.set("s1#2026-12-01T07:00Z", { status: "ENQUEUED", claimedAt: new Date(now.getTime() - 10_000).toISOString() });
    const outcome = await runSchedulerTick(ports, now);
    expect(outcome).toMatchObject({ enqueued: [], alreadyClaimed: 1 });
    expect(calls.sent).toEqual([]);
    expect(calls.advanced).toEqual([]);
  });

  it("crash recovery: SendMessageBatch throws on the first tick → claims released, error rethrown; the next tick enqueues exactly once", async () => {
    const shards = [[entry("a"), entry("b")]];
    let down = true;
    const { ports, calls, claims } = fakePorts(shards, {
      readSchedule: readBack(shards.flat()),
      enqueue: async (messages) => {
        if (down) throw new Error("SQS unavailable");
        calls.sent.push(...messages.map((m) => m.scheduleId));
        return [];
      },
    });
    await expect(runSchedulerTick(ports, now)).rejects.toThrow("SQS unavailable");
    expect(calls.released.sort()).toEqual(["a", "b"]);
    expect(calls.freed.sort()).toEqual(["a", "b"]);
    expect(claims.size).toBe(0);
    expect(calls.advanced).toEqual([]);

    down = false;
    const next = await runSchedulerTick(ports, new Date(now.getTime() + 60_000));
    expect(next.enqueued.map((m) => m.scheduleId).sort()).toEqual(["a", "b"]);
    expect(calls.sent.sort()).toEqual(["a", "b"]);
    expect(calls.advanced.sort()).toEqual(["a", "b"]);
    expect([...claims.values()].map((c) => c.status)).toEqual(["ENQUEUED", "ENQUEUED"]);
  });

  it("crash recovery: a claim left by a tick that died before advancing is sent again after the grace period, once", async () => {
    const shards = [[entry("s1")]];
    const { ports, calls, claims } = fakePorts(shards, { readSchedule: readBack(shards.flat()) });
    claims.set("s1#2026-12-01T07:00Z", { status: "ENQUEUED", claimedAt: new Date(now.getTime() - 3 * 60_000).toISOString() });
    const outcome = await runSchedulerTick(ports, now);
    expect(outcome).toMatchObject({ resent: 1, alreadyClaimed: 0 });
    expect(calls.sent).toEqual(["s1"]);
    expect(calls.advanced).toEqual(["s1"]);
    expect(claims.get("s1#2026-12-01T07:00Z")?.status).toBe("ENQUEUED");
  });

  it("a slot past the allowed lateness whose message was sent is advanced without recording a miss", async () => {
    const shards = [[entry("ran", "2026-12-01T05:00:00.000Z")]];
    const { ports, calls, claims } = fakePorts(shards, { readSchedule: readBack(shards.flat()) });
    claims.set("ran#2026-12-01T05:00Z", { status: "DONE", claimedAt: "2026-12-01T05:00:10.000Z" });
    const outcome = await runSchedulerTick(ports, now);
    expect(outcome).toMatchObject({ missed: 0, advancedLate: 1 });
    expect(calls.missed).toEqual([]);
    expect(calls.advanced).toEqual(["ran"]);
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

  it("more due than fanOutAbove: claims nothing itself and sends the due entries as pages (at most 10 per batch)", async () => {
    const shards = [Array.from({ length: 130 }, (_, i) => entry(`a${i}`)), Array.from({ length: 95 }, (_, i) => entry(`b${i}`))];
    const pageBatches: number[] = [];
    const { ports, calls } = fakePorts(shards, { readSchedule: readBack(shards.flat()) });
    const sendPages = ports.enqueuePages;
    ports.enqueuePages = async (pages) => {
      pageBatches.push(pages.length);
      await sendPages(pages);
    };
    const outcome = await runSchedulerTick(ports, now, { fanOutAbove: 100, pageSize: 20 });
    expect(outcome).toMatchObject({ enqueued: [], fannedOut: 225, pages: 12 });
    expect(pageBatches).toEqual([10, 2]);
    expect(calls.claimed).toEqual([]);
    expect(calls.pages.flatMap((page) => page.entries.map((e) => e.scheduleId)).sort()).toEqual(
      shards
        .flat()
        .map((e) => e.scheduleId)
        .sort(),
    );
    expect(calls.pages.every((page) => page.kind === "duePage" && page.tickTime === now.toISOString() && page.entries.length <= 20)).toBe(
      true,
    );

    // A worker handling every page enqueues each due schedule exactly once.
    for (const page of calls.pages) await handleDueEntries(ports, page.entries, now);
    expect(calls.sent.sort()).toEqual(
      shards
        .flat()
        .map((e) => e.scheduleId)
        .sort(),
    );
    expect(new Set(calls.advanced).size).toBe(225);
  });

  it("fan-out keeps an organization's due schedules of every shard together in one page (one cap write per organization and page)", async () => {
    const at = (organizationId: string, scheduleId: string): DueEntry => ({
      organizationId,
      scheduleId,
      nextRunAt: "2026-12-01T07:00:00.000Z",
    });
    // Each shard is ordered by minute, organization and id: one organization's schedules are in every shard.
    const shards = [0, 1, 2].map((shard) => ["o1", "o2", "o3", "o4"].map((o) => at(o, `${o}-${shard}`)));
    const { ports, calls } = fakePorts(shards);
    const outcome = await runSchedulerTick(ports, now, { fanOutAbove: 5, pageSize: 6 });
    expect(outcome.pages).toBe(2);
    const pageOf = new Map(calls.pages.flatMap((page, index) => page.entries.map((e) => [e.scheduleId, index] as const)));
    for (const o of ["o1", "o2", "o3", "o4"]) expect(new Set([0, 1, 2].map((shard) => pageOf.get(`${o}-${shard}`))).size).toBe(1);
  });

  it("sends batches of at most 10 with at most `concurrency` SendMessageBatch calls in flight", async () => {
    const shards = [Array.from({ length: 200 }, (_, i) => entry(`s${i}`))];
    let inFlight = 0;
    let peak = 0;
    const { ports } = fakePorts(shards, {
      readSchedule: readBack(shards.flat()),
      enqueue: async (messages) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight--;
        expect(messages.length).toBeLessThanOrEqual(10);
        return [];
      },
    });
    const outcome = await runSchedulerTick(ports, now, { concurrency: 4 });
    expect(outcome.enqueued).toHaveLength(200);
    expect(peak).toBe(4);
  });

  it("crash recovery with parallel groups: a throwing send stops every group from taking more, only un-sent claims are released", async () => {
    const shards = [Array.from({ length: 100 }, (_, i) => entry(`s${i}`))];
    let sends = 0;
    const { ports, calls, claims } = fakePorts(shards, {
      readSchedule: readBack(shards.flat()),
      enqueue: async (messages) => {
        sends++;
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (sends === 3) throw new Error("SQS unavailable");
        calls.sent.push(...messages.map((m) => m.scheduleId));
        return [];
      },
    });
    await expect(runSchedulerTick(ports, now, { concurrency: 3 })).rejects.toThrow("SQS unavailable");
    expect(calls.sent.length).toBeLessThan(100);
    // Every claim left is a sent one (and advanced); nothing un-sent is left claimed.
    expect(claims.size).toBe(calls.sent.length);
    expect(calls.advanced.sort()).toEqual([...calls.sent].sort());

    // The next tick takes the rest: every schedule ends up sent exactly once.
    const rest = shards[0]?.filter((e) => !calls.advanced.includes(e.scheduleId)) ?? [];
    await handleDueEntries(
      {
        ...ports,
        enqueue: async (messages) => {
          calls.sent.push(...messages.map((m) => m.scheduleId));
          return [];
        },
      },
      rest,
      now,
    );
    expect(calls.sent.sort()).toEqual(shards[0]?.map((e) => e.scheduleId).sort());
  });

  it("reads the caps of a page's organizations together and takes each organization's cap slots with one call, whatever the order of the entries", async () => {
    const orgEntry = (organizationId: string, scheduleId: string): DueEntry => ({
      organizationId,
      scheduleId,
      nextRunAt: "2026-12-01T07:00:00.000Z",
    });
    const due = [
      orgEntry("o1", "a"),
      orgEntry("o2", "b"),
      orgEntry("o1", "c"),
      orgEntry("o3", "d"),
      orgEntry("o2", "e"),
      orgEntry("o1", "f"),
    ];
    const asked: Array<{ organizationId: string; runs: string[] }> = [];
    const { ports, calls } = fakePorts([due], {
      readSchedule: readBack(due),
      // o1's cap has room for two: its third run (in page order) is over it.
      takeActiveRuns: async (organizationId, messages) => {
        asked.push({ organizationId, runs: messages.map((m) => m.scheduleId) });
        return organizationId === "o1" ? messages.slice(0, 2) : messages;
      },
    });
    const outcome = await handleDueEntries(ports, due, now);
    expect(calls.capReads.map((ids) => [...ids].sort())).toEqual([["o1", "o2", "o3"]]);
    expect(asked.sort((x, y) => x.organizationId.localeCompare(y.organizationId))).toEqual([
      { organizationId: "o1", runs: ["a", "c", "f"] },
      { organizationId: "o2", runs: ["b", "e"] },
      { organizationId: "o3", runs: ["d"] },
    ]);
    expect(outcome).toMatchObject({ overCap: 1 });
    expect(calls.overCap).toEqual(["f"]);
    // Sent in page order, in one batch.
    expect(calls.sent).toEqual(["a", "b", "c", "d", "e"]);
    expect(calls.advanced.sort()).toEqual(["a", "b", "c", "d", "e", "f"]);
  });

  it("crash recovery: the cap write throwing releases every claim of the page and sends nothing", async () => {
    const due = [entry("a"), entry("b")];
    const { ports, calls, claims } = fakePorts([due], {
      readSchedule: readBack(due),
      takeActiveRuns: async () => {
        throw new Error("DynamoDB unavailable");
      },
    });
    await expect(handleDueEntries(ports, due, now)).rejects.toThrow("DynamoDB unavailable");
    expect(calls.sent).toEqual([]);
    expect(calls.advanced).toEqual([]);
    expect(claims.size).toBe(0);
    expect(calls.freed.sort()).toEqual(["a", "b"]);
  });

  it("a run over its organization's cap is not sent: recorded SKIPPED (claim and logExecuted) and the schedule advanced", async () => {
    const shards = [[entry("in"), entry("over")]];
    const { ports, calls, claims } = fakePorts(shards, { readSchedule: readBack(shards.flat()) });
    ports.takeActiveRuns = async (_o, messages) => messages.filter((m) => m.scheduleId !== "over");
    const outcome = await runSchedulerTick(ports, now);
    expect(outcome).toMatchObject({ overCap: 1, failed: 0 });
    expect(outcome.enqueued.map((m) => m.scheduleId)).toEqual(["in"]);
    expect(calls.sent).toEqual(["in"]);
    expect(calls.overCap).toEqual(["over"]);
    expect(claims.get("over#2026-12-01T07:00Z")?.status).toBe("SKIPPED");
    expect(calls.advanced.sort()).toEqual(["in", "over"]);
    expect(calls.freed).toEqual([]);
  });
});
