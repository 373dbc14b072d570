import { activeRunSlots } from "#shared/app/active-runs";
import { runsForSharedQueue } from "#shared/app/run-spillover";
import { maxRunsQueuedOf } from "#shared/app/usage";
import { appConfig } from "#shared/config/env";
import { activeRunLeaseSeconds } from "#shared/queue/definitions";
import { takeActiveRunSlots } from "#shared/store/active-run-store";
import { scheduleRunKey, scheduledRunOverCapReason } from "#shared/domain/runs/active-runs";
import type { ScheduleRecord } from "#shared/domain/schedules/schema";
import type { SchedulerTickPorts } from "#shared/domain/runs/scheduler-tick";
import type { RoutingRunMessage } from "#shared/domain/runs/messages";
import { formatDateTimeUtc } from "#shared/domain/time";
import { sendDuePages, sendRunMessages } from "#shared/queue/run-queue";
import {
  advanceSchedule,
  claimRunSlot,
  finishRunClaim,
  readRunClaim,
  readSchedulesForTick,
  recordLogExecuted,
  releaseRunSlot,
} from "#shared/store/run-store";
import { DUE_SHARD_COUNT, listDueSchedules } from "#shared/store/schedule-store";

/**
 * Composition root of the scheduler tick: used by the tick itself and by the run worker for `duePage`
 * jobs. The caps (each organization's tenant plan `maxRunsQueued`) are read in batches, once per
 * tick or page.
 */
export function schedulerTickPorts(now: Date): SchedulerTickPorts<ScheduleRecord> {
  const timeZone = appConfig().APP_TIMEZONE;
  // The runs beyond their organization's share of the workers, decided when they take their slots (shared/app/run-spillover.ts).
  const spilled = new WeakSet<RoutingRunMessage>();
  return {
    shardCount: DUE_SHARD_COUNT,
    listDue: listDueSchedules,
    readSchedules: readSchedulesForTick,
    claimSlot: (message) => claimRunSlot(message, now),
    readClaim: readRunClaim,
    releaseSlot: releaseRunSlot,
    enqueue: (messages) => sendRunMessages(messages, new Set(messages.filter((message) => spilled.has(message)))),
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
    capsOf: (organizationIds) => maxRunsQueuedOf(organizationIds, appConfig().MAX_ACTIVE_RUNS_PER_ORG),
    takeActiveRuns: async (organizationId, messages, max) => {
      const runKeys = messages.map((message) => scheduleRunKey(message.scheduleId, message.slot));
      const taken = new Set(await takeActiveRunSlots(organizationId, runKeys, max, new Date(), activeRunLeaseSeconds));
      const takenMessages = messages.filter((_, index) => taken.has(runKeys[index] as string));
      // In the order given (oldest slot first): the first ones fit in the organization's share.
      const room = await runsForSharedQueue(organizationId, [...taken]);
      for (const message of takenMessages.slice(room)) spilled.add(message);
      return takenMessages;
    },
    releaseActiveRun: (message) => activeRunSlots.release(message.organizationId, scheduleRunKey(message.scheduleId, message.slot)),
    skipOverCap: async (message, max) => {
      const reason = scheduledRunOverCapReason(max);
      await finishRunClaim(message.organizationId, message.scheduleId, message.slot, "SKIPPED", reason, now);
      await recordLogExecuted(message.organizationId, message.scheduleId, {
        status: "SKIPPED",
        message: reason,
        routingResultId: null,
        dispatched: null,
        lastExecute: formatDateTimeUtc(now),
      });
    },
  };
}
