import { activeRunSlots } from "#shared/app/active-runs";
import { maxRunsQueued } from "#shared/app/usage";
import { appConfig } from "#shared/config/env";
import { activeRunLeaseSeconds } from "#shared/queue/definitions";
import { takeActiveRunSlots } from "#shared/store/active-run-store";
import { scheduleRunKey, scheduledRunOverCapReason } from "#shared/domain/runs/active-runs";
import type { ScheduleRecord } from "#shared/domain/schedules/schema";
import type { SchedulerTickPorts } from "#shared/domain/runs/scheduler-tick";
import { formatDateTimeUtc } from "#shared/domain/time";
import { sendDuePages, sendRunMessages } from "#shared/queue/run-queue";
import { advanceSchedule, claimRunSlot, finishRunClaim, readRunClaim, readSchedulesForTick, recordLogExecuted, releaseRunSlot } from "#shared/store/run-store";
import { DUE_SHARD_COUNT, listDueSchedules } from "#shared/store/schedule-store";

/**
 * Composition root of the scheduler tick: used by the tick itself and by the run worker for `duePage`
 * jobs, one instance per tick or page. Each organization's cap (its tenant plan's `maxRunsQueued`) is
 * read once per instance, not once per run: a plan change applies from the next tick or page.
 */
export function schedulerTickPorts(now: Date): SchedulerTickPorts<ScheduleRecord> {
  const timeZone = appConfig().APP_TIMEZONE;
  const caps = new Map<string, Promise<number>>();
  const capOf = (organizationId: string): Promise<number> => {
    let cap = caps.get(organizationId);
    if (!cap) {
      cap = maxRunsQueued(organizationId, appConfig().MAX_ACTIVE_RUNS_PER_ORG);
      cap.catch(() => caps.delete(organizationId)); // a failed read is not remembered
      caps.set(organizationId, cap);
    }
    return cap;
  };
  return {
    shardCount: DUE_SHARD_COUNT,
    listDue: listDueSchedules,
    readSchedules: readSchedulesForTick,
    claimSlot: (message) => claimRunSlot(message, now),
    readClaim: readRunClaim,
    releaseSlot: releaseRunSlot,
    enqueue: sendRunMessages,
    enqueuePages: sendDuePages,
    advance: (organizationId, scheduleId, handledRunAt, seen) => advanceSchedule(organizationId, scheduleId, handledRunAt, timeZone, seen),
    recordMissed: (organizationId, scheduleId, missedRunAt) =>
      recordLogExecuted(organizationId, scheduleId, {
        status: "SKIPPED",
        message: `The run due at ${missedRunAt} was missed by more than an hour (the scheduler was not running) and was skipped.`,
        routingResultId: null,
        dispatched: null,
        lastExecute: formatDateTimeUtc(now),
      }),
    takeActiveRuns: async (organizationId, messages) => {
      const runKeys = messages.map((message) => scheduleRunKey(message.scheduleId, message.slot));
      const taken = new Set(await takeActiveRunSlots(organizationId, runKeys, await capOf(organizationId), new Date(), activeRunLeaseSeconds));
      return messages.filter((_, index) => taken.has(runKeys[index] as string));
    },
    releaseActiveRun: (message) => activeRunSlots.release(message.organizationId, scheduleRunKey(message.scheduleId, message.slot)),
    skipOverCap: async (message) => {
      const reason = scheduledRunOverCapReason(await capOf(message.organizationId));
      await finishRunClaim(message.organizationId, message.scheduleId, message.slot, "SKIPPED", reason, now);
      await recordLogExecuted(message.organizationId, message.scheduleId, { status: "SKIPPED", message: reason, routingResultId: null, dispatched: null, lastExecute: formatDateTimeUtc(now) });
    },
  };
}
