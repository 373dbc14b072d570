import type { ScheduledEvent } from "aws-lambda";
import { appConfig } from "#shared/config/env";
import { runSchedulerTick, type SchedulerTickPorts } from "#shared/domain/runs/scheduler-tick";
import { formatDateTimeUtc } from "#shared/domain/time";
import { jobHandler, traceClients } from "#shared/observability/job-handler";
import { logger, metrics, MetricUnit } from "#shared/observability/powertools";
import { sendRunMessages } from "#shared/queue/run-queue";
import { sqsClient } from "#shared/queue/sqs";
import { documentClient } from "#shared/store/dynamo";
import { advanceSchedule, claimRunSlot, markRunSlotSent, readRunClaim, readScheduleForTick, recordLogExecuted, releaseRunSlot } from "#shared/store/run-store";
import { DUE_SHARD_COUNT, listDueSchedules } from "#shared/store/schedule-store";

traceClients(documentClient, sqsClient);

/**
 * Invoked every minute by the EventBridge rule (and at each minute boundary by `npm start`).
 * "Now" is the event's own time, so a delayed or replayed event handles the minute it was for.
 * Each count of the outcome is also a metric (dimension job=scheduler-tick).
 */
export const handler = jobHandler("scheduler-tick", async (event: ScheduledEvent): Promise<TickCounts> => {
  const now = new Date(event.time);
  logger.appendKeys({ tickTime: event.time });
  const timeZone = appConfig().APP_TIMEZONE;
  const ports: SchedulerTickPorts = {
    shardCount: DUE_SHARD_COUNT,
    listDue: listDueSchedules,
    readSchedule: readScheduleForTick,
    claimSlot: (message) => claimRunSlot(message, now),
    readClaim: readRunClaim,
    markSent: (message) => markRunSlotSent(message, now),
    releaseSlot: releaseRunSlot,
    enqueue: sendRunMessages,
    advance: (organizationId, scheduleId, handledRunAt) => advanceSchedule(organizationId, scheduleId, handledRunAt, timeZone),
    recordMissed: (organizationId, scheduleId, missedRunAt) =>
      recordLogExecuted(organizationId, scheduleId, {
        status: "SKIPPED",
        message: `The run due at ${missedRunAt} was missed by more than an hour (the scheduler was not running) and was skipped.`,
        routingResultId: null,
        dispatched: null,
        lastExecute: formatDateTimeUtc(now),
      }),
  };
  const outcome = await runSchedulerTick(ports, now);
  const counts: TickCounts = {
    enqueued: outcome.enqueued.length,
    alreadyClaimed: outcome.alreadyClaimed,
    resent: outcome.resent,
    advancedLate: outcome.advancedLate,
    missed: outcome.missed,
    failed: outcome.failed,
  };
  logger.info("scheduler tick", { ...counts });
  for (const [name, value] of Object.entries(counts)) metrics.addMetric(`Tick${name[0]?.toUpperCase()}${name.slice(1)}`, MetricUnit.Count, value);
  return counts;
});

interface TickCounts {
  enqueued: number;
  alreadyClaimed: number;
  resent: number;
  advancedLate: number;
  missed: number;
  failed: number;
}
