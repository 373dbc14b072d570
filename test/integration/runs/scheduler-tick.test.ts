import type { SQSClient } from "@aws-sdk/client-sqs";
import type { ScheduledEvent } from "aws-lambda";
import { beforeEach, describe, expect, it } from "vitest";
import { handler as tick } from "#functions/jobs/scheduler-tick";
import { handler as runWorker } from "#functions/jobs/routing-run";
import { schedulerTickPorts } from "#shared/app/scheduler-tick";
import { handleDueEntries, runSchedulerTick } from "#shared/domain/runs/scheduler-tick";
import { scheduleService } from "#shared/app/schedules";
import type { Caller } from "#shared/domain/caller";
import { activeRunLeases, releaseActiveRunSlot, takeActiveRunSlot, takeActiveRunSlots } from "#shared/store/active-run-store";
import { readRunClaim } from "#shared/store/run-store";
import { documentClient } from "#shared/store/dynamo";
import { dynamoScheduleStore } from "#shared/store/schedule-store";
import { drainQueue, useIsolatedTableAndQueue } from "#test/support/isolated-resources";
import { newOrganizationId } from "#test/support/local-api";
import { acknowledge, receive, seedHub, sqsEvent } from "./run-fixtures.ts";
import { resetStrictDynamoDb } from "#test/support/strict-dynamodb";

/** Schedules must name an existing configuration profile. */
const profileOf = async (owner: Caller) => (await seedHub(owner, { vehicles: 0, visits: 0 })).profile._id;

const tickAt = (time: Date) => tick({ time: time.toISOString() } as ScheduledEvent);
const caller = (): Caller => ({
  userId: "u",
  organizationId: newOrganizationId(),
  hubIds: [],
  permissions: new Set(),
  permissionDetails: [],
});

function dailySchedule(time: string, overrides: Record<string, unknown> = {}) {
  return {
    name: "Morning run",
    configurationId: "conf-1",
    periode: "daily" as const,
    schedules: [{ time: [time] }],
    startTime: "2020-01-01 00:00",
    endTime: "2099-12-31 23:59",
    frequency: null,
    interval: null,
    autoDispatch: false,
    active: true,
    ...overrides,
  };
}

async function nextRunOf(organizationId: string, scheduleId: string): Promise<string | null> {
  return (await dynamoScheduleStore.find(organizationId, scheduleId))?.schedule.nextRunAt ?? null;
}

describe("Job: scheduler tick (DynamoDB Local + local SQS)", () => {
  let sqs: SQSClient;
  let queueUrl: string;

  // A table and queue per test: a test that times out leaves its messages and due schedules behind,
  // and the next test must not receive or tick them.
  beforeEach(async () => {
    ({ sqs, queueUrl } = await useIsolatedTableAndQueue());
  });

  it("enqueues a due schedule exactly once even when two ticks run at the same time, then advances it", async () => {
    const owner = caller();
    const configurationId = await profileOf(owner);
    const schedule = await scheduleService.create(owner, dailySchedule("07:00", { configurationId }));
    const dueAt = (await nextRunOf(owner.organizationId, schedule._id)) as string;
    const afterDue = new Date(new Date(dueAt).getTime() + 20_000);

    const outcomes = await Promise.all([tickAt(afterDue), tickAt(afterDue)]);
    const messages = (await drainQueue(sqs, queueUrl)).filter((m: any) => m.scheduleId === schedule._id);

    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      kind: "schedule",
      organizationId: owner.organizationId,
      scheduleId: schedule._id,
      scheduledFor: dueAt,
    });
    expect(outcomes.reduce((sum, o) => sum + o.enqueued, 0)).toBe(1);
    expect(await nextRunOf(owner.organizationId, schedule._id)).toBe(new Date(new Date(dueAt).getTime() + 86_400_000).toISOString());

    // A repeated tick for the same minute finds nothing more to do.
    expect((await tickAt(afterDue)).enqueued).toBe(0);
    expect(await drainQueue(sqs, queueUrl)).toEqual([]);
  });

  it("leaves schedules that are not due, and paused schedules, alone", async () => {
    const owner = caller();
    const configurationId = await profileOf(owner);
    const later = await scheduleService.create(owner, dailySchedule("08:00", { configurationId }));
    const paused = await scheduleService.create(owner, dailySchedule("08:00", { configurationId, active: false }));
    const laterRun = (await nextRunOf(owner.organizationId, later._id)) as string;
    const justBefore = new Date(new Date(laterRun).getTime() - 60_000);

    await tickAt(justBefore);
    const messages = (await drainQueue(sqs, queueUrl)) as Array<{ organizationId: string }>;
    expect(messages.filter((m) => m.organizationId === owner.organizationId)).toEqual([]);
    expect(await nextRunOf(owner.organizationId, later._id)).toBe(laterRun);
    expect(await nextRunOf(owner.organizationId, paused._id)).toBeNull();
  });

  it("skips a run missed by more than an hour, records why, and moves to the next run", async () => {
    const owner = caller();
    const configurationId = await profileOf(owner);
    const schedule = await scheduleService.create(owner, dailySchedule("09:00", { configurationId }));
    const dueAt = (await nextRunOf(owner.organizationId, schedule._id)) as string;

    await tickAt(new Date(new Date(dueAt).getTime() + 2 * 3_600_000));
    const messages = (await drainQueue(sqs, queueUrl)) as Array<{ scheduleId: string }>;
    expect(messages.filter((m) => m.scheduleId === schedule._id)).toEqual([]);
    const stored = await dynamoScheduleStore.find(owner.organizationId, schedule._id);
    expect(stored?.schedule.logExecuted).toMatchObject({ status: "SKIPPED" });
    expect(stored?.schedule.nextRunAt).toBe(new Date(new Date(dueAt).getTime() + 86_400_000).toISOString());
  });

  it("fan-out: more due than one tick handles → duePage jobs; workers handling them enqueue each schedule once and advance it", async () => {
    const owner = caller();
    const configurationId = await profileOf(owner);
    const schedules = [];
    for (let i = 0; i < 5; i++) schedules.push(await scheduleService.create(owner, dailySchedule("06:00", { configurationId })));
    const dueAt = (await nextRunOf(owner.organizationId, schedules[0]?._id as string)) as string;
    const afterDue = new Date(new Date(dueAt).getTime() + 20_000);
    await drainQueue(sqs, queueUrl);

    const outcome = await runSchedulerTick(schedulerTickPorts(afterDue), afterDue, { fanOutAbove: 2, pageSize: 2 });
    expect(outcome.enqueued).toEqual([]);
    expect(outcome.fannedOut).toBeGreaterThanOrEqual(5);
    const mine = new Set(schedules.map((s) => s._id));

    // The worker handles every page (twice for the first, as after a redelivery): runs are enqueued once.
    const runs: Array<{ scheduleId: string }> = [];
    let pagesHandled = 0;
    let redelivered = false;
    for (let attempt = 0; attempt < 100 && pagesHandled < outcome.pages; attempt++) {
      const messages = await receive(sqs, queueUrl);
      for (const message of messages) {
        const body = JSON.parse(message.Body as string);
        if (body.kind !== "duePage") {
          runs.push(body);
          await acknowledge(sqs, queueUrl, [message], { batchItemFailures: [] });
          continue;
        }
        const response = await runWorker(sqsEvent([message]));
        expect(response.batchItemFailures).toEqual([]);
        if (!redelivered) {
          redelivered = true;
          expect((await runWorker(sqsEvent([message]))).batchItemFailures).toEqual([]);
        }
        await acknowledge(sqs, queueUrl, [message], response);
        pagesHandled++;
      }
      if (messages.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    runs.push(...((await drainQueue(sqs, queueUrl)) as Array<{ scheduleId: string }>));
    expect(pagesHandled).toBe(outcome.pages);
    expect(
      runs
        .filter((m) => mine.has(m.scheduleId))
        .map((m) => m.scheduleId)
        .sort(),
    ).toEqual([...mine].sort());
    for (const schedule of schedules) {
      expect(await nextRunOf(owner.organizationId, schedule._id)).toBe(new Date(new Date(dueAt).getTime() + 86_400_000).toISOString());
    }
  });

  it("cap on active runs: with 6 of one organization's schedules due, 5 are enqueued and the 6th is recorded SKIPPED with the reason", async () => {
    const owner = caller();
    const configurationId = await profileOf(owner);
    const schedules = [];
    for (let i = 0; i < 6; i++)
      schedules.push(await scheduleService.create(owner, dailySchedule("05:00", { configurationId, name: `run ${i}` })));
    const dueAt = (await nextRunOf(owner.organizationId, schedules[0]?._id as string)) as string;
    await drainQueue(sqs, queueUrl);

    const outcome = await tickAt(new Date(new Date(dueAt).getTime() + 20_000));
    expect(outcome).toMatchObject({ enqueued: 5, overCap: 1 });
    const queued = ((await drainQueue(sqs, queueUrl)) as Array<{ organizationId: string; scheduleId: string }>).filter(
      (m) => m.organizationId === owner.organizationId,
    );
    expect(queued).toHaveLength(5);
    expect(Object.keys(await activeRunLeases(owner.organizationId))).toHaveLength(5);

    const skipped = schedules.find((s) => !queued.some((m) => m.scheduleId === s._id));
    const stored = await dynamoScheduleStore.find(owner.organizationId, skipped?._id as string);
    expect(stored?.schedule.logExecuted).toMatchObject({
      status: "SKIPPED",
      routingResultId: null,
      message: expect.stringContaining("already had 5 routing runs queued or running"),
    });
    expect((await readRunClaim(owner.organizationId, skipped?._id as string, `${dueAt.slice(0, 16)}Z`))?.status).toBe("SKIPPED");
    // Every schedule moved on to its next run, the skipped one too.
    for (const schedule of schedules) {
      expect(await nextRunOf(owner.organizationId, schedule._id)).toBe(new Date(new Date(dueAt).getTime() + 86_400_000).toISOString());
    }
  });

  it("racing ticks and pages over several organizations: every (schedule, slot) is sent exactly once, and no organization passes its cap", async () => {
    // Three organizations with 6 schedules due each (their cap is 5), all due in the same minute.
    const owners = [caller(), caller(), caller()];
    const schedules: Array<{ organizationId: string; scheduleId: string }> = [];
    for (const owner of owners) {
      const configurationId = await profileOf(owner);
      for (let i = 0; i < 6; i++) {
        const created = await scheduleService.create(owner, dailySchedule("04:00", { configurationId, name: `race ${i}` }));
        schedules.push({ organizationId: owner.organizationId, scheduleId: created._id });
      }
    }
    const first = schedules[0] as { organizationId: string; scheduleId: string };
    const dueAt = (await nextRunOf(first.organizationId, first.scheduleId)) as string;
    const afterDue = new Date(new Date(dueAt).getTime() + 20_000);
    await drainQueue(sqs, queueUrl);

    // Two ticks handling the minute themselves, and two workers handling the same entries as one page each
    // (as when the tick's event is delivered twice and one tick fanned out), all at the same time.
    // Production DynamoDB throttles a burst like this one (on-demand tables too, while they scale):
    // 5 % of the racers' calls are, and the guarantees must hold through the retries.
    const entries = schedules.map((s) => ({ ...s, nextRunAt: dueAt }));
    const semantics = resetStrictDynamoDb({ throttleRate: 0.05, seed: 7, throttleError: "ThrottlingException" });
    const outcomes = await Promise.all([
      runSchedulerTick(schedulerTickPorts(afterDue), afterDue),
      runSchedulerTick(schedulerTickPorts(afterDue), afterDue),
      handleDueEntries(schedulerTickPorts(afterDue), entries, afterDue),
      handleDueEntries(schedulerTickPorts(afterDue), [...entries].reverse(), afterDue),
    ]).finally(() => semantics.configure({ throttleRate: 0 }));
    // The test would prove nothing about throttles if none had been met.
    expect(semantics.counters().throttledCalls).toBeGreaterThan(0);
    const mine = new Set(schedules.map((s) => s.scheduleId));
    const queued = ((await drainQueue(sqs, queueUrl)) as Array<{ organizationId: string; scheduleId: string; slot: string }>).filter((m) =>
      mine.has(m.scheduleId),
    );
    const slots = queued.map((m) => `${m.scheduleId}#${m.slot}`);
    expect(new Set(slots).size).toBe(slots.length);
    expect(outcomes.reduce((sum, o) => sum + o.enqueued.length, 0)).toBe(queued.length);
    for (const owner of owners) {
      expect(queued.filter((m) => m.organizationId === owner.organizationId)).toHaveLength(5);
      expect(Object.keys(await activeRunLeases(owner.organizationId))).toHaveLength(5);
    }
    expect(outcomes.reduce((sum, o) => sum + o.overCap, 0)).toBe(3);
    for (const s of schedules)
      expect(await nextRunOf(s.organizationId, s.scheduleId)).toBe(new Date(new Date(dueAt).getTime() + 86_400_000).toISOString());
  });

  it("cap store, several runs in one write: concurrent takers never pass the cap, held runs keep their slot, ended leases are reclaimed", async () => {
    const organizationId = caller().organizationId;
    const start = new Date("2026-12-01T07:00:00Z");
    // Four takers of three runs each, at once, on an organization without its map yet.
    const taken = await Promise.all(
      Array.from({ length: 4 }, (_, t) => takeActiveRunSlots(organizationId, [`S#${t}a`, `S#${t}b`, `S#${t}c`], 5, start, 3600)),
    );
    expect(taken.flat()).toHaveLength(5);
    expect(Object.keys(await activeRunLeases(organizationId)).sort()).toEqual(taken.flat().sort());
    // A run holding a slot (a resent run) keeps it in a full map; the others asked with it get none. The
    // failed first write answers the map it found, so no read is needed: two writes.
    const holder = taken.flat()[0] as string;
    const commands: string[] = [];
    const countCommands = (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: unknown) => {
      commands.push(String(context.commandName));
      return next(args);
    };
    documentClient().middlewareStack.add(countCommands as never, { step: "initialize", name: "countCommands" });
    try {
      expect(await takeActiveRunSlots(organizationId, ["S#new", holder], 5, start, 3600)).toEqual([holder]);
    } finally {
      documentClient().middlewareStack.remove("countCommands");
    }
    expect(commands).toEqual(["UpdateItemCommand", "UpdateItemCommand"]);
    // Two hours later every lease has ended: the next taker removes them and takes what fits.
    const later = new Date(start.getTime() + 2 * 3_600_000);
    expect(await takeActiveRunSlots(organizationId, ["S#x1", "S#x2", "S#x3", "S#x4", "S#x5", "S#x6"], 5, later, 3600)).toEqual([
      "S#x1",
      "S#x2",
      "S#x3",
      "S#x4",
      "S#x5",
    ]);
    expect(Object.keys(await activeRunLeases(organizationId)).sort()).toEqual(["S#x1", "S#x2", "S#x3", "S#x4", "S#x5"]);
    // More runs than one write holds (chunks of 40) under a roomy cap: all taken.
    const many = Array.from({ length: 90 }, (_, i) => `S#m${i}`);
    const roomy = caller().organizationId;
    expect(await takeActiveRunSlots(roomy, many, 100, start, 3600)).toEqual(many);
    expect(
      await takeActiveRunSlots(
        roomy,
        ["S#m0", "S#y1", "S#y2", "S#y3", "S#y4", "S#y5", "S#y6", "S#y7", "S#y8", "S#y9", "S#y10", "S#y11"],
        100,
        start,
        3600,
      ),
    ).toEqual(["S#m0", ...Array.from({ length: 10 }, (_, i) => `S#y${i + 1}`)]);
  });

  it("cap store: concurrent takers never pass the cap, release is idempotent, and ended leases (crashed runs) are reclaimed", async () => {
    const organizationId = caller().organizationId;
    const start = new Date("2026-12-01T07:00:00Z");
    const taken = await Promise.all(Array.from({ length: 8 }, (_, i) => takeActiveRunSlot(organizationId, `R#${i}`, 5, start, 3600)));
    expect(taken.filter(Boolean)).toHaveLength(5);
    const holders = Object.keys(await activeRunLeases(organizationId));
    expect(holders).toHaveLength(5);
    // A holder takes again (a resent run): kept, not refused.
    expect(await takeActiveRunSlot(organizationId, holders[0] as string, 5, start, 3600)).toBe(true);

    await releaseActiveRunSlot(organizationId, holders[0] as string);
    await releaseActiveRunSlot(organizationId, holders[0] as string); // a redelivery frees nothing twice
    expect(Object.keys(await activeRunLeases(organizationId))).toHaveLength(4);
    expect(await takeActiveRunSlot(organizationId, "R#new", 5, start, 3600)).toBe(true);
    expect(await takeActiveRunSlot(organizationId, "R#late", 5, start, 3600)).toBe(false);

    // Two hours later every lease has ended (nobody freed them): the next taker removes them and gets in.
    const later = new Date(start.getTime() + 2 * 3_600_000);
    expect(await takeActiveRunSlot(organizationId, "R#late", 5, later, 3600)).toBe(true);
    expect(Object.keys(await activeRunLeases(organizationId))).toEqual(["R#late"]);
  });
});
