import type { ScheduledEvent } from "aws-lambda";
import { schedulerTickPorts } from "#shared/app/scheduler-tick";
import { runSchedulerTick, type TickOutcome } from "#shared/domain/runs/scheduler-tick";
import { jobHandler, traceClients } from "#shared/observability/job-handler";
import { logger, metrics, MetricUnit } from "#shared/observability/powertools";
import { sqsClient } from "#shared/queue/sqs";
import { documentClient } from "#shared/store/dynamo";

traceClients(documentClient, sqsClient);

/** The tick's counts published as metrics (`Tick<Name>`), the dashboard's "due" panel and its alarms. */
export const tickMetrics = ["enqueued", "fannedOut", "missed", "failed", "overCap"] as const;

/** What a tick returns and logs: the outcome's counts. */
export type TickSummary = Omit<TickOutcome, "enqueued"> & { enqueued: number };

/**
 * Invoked every minute by the EventBridge rule (and at each minute boundary by `npm start`).
 * "Now" is the event's own time, so a delayed or replayed event handles the minute it was for.
 * The counts an operator acts on are also metrics (dimension job=scheduler-tick): runs enqueued,
 * schedules fanned out, missed, failed and over their organization's cap; the rest are in the log line.
 */
export const handler = jobHandler("scheduler-tick", async (event: ScheduledEvent): Promise<TickSummary> => {
  const now = new Date(event.time);
  logger.appendKeys({ tickTime: event.time });
  const outcome = await runSchedulerTick(schedulerTickPorts(now), now);
  const summary: TickSummary = {
    enqueued: outcome.enqueued.length,
    alreadyClaimed: outcome.alreadyClaimed,
    resent: outcome.resent,
    advancedLate: outcome.advancedLate,
    missed: outcome.missed,
    failed: outcome.failed,
    overCap: outcome.overCap,
    fannedOut: outcome.fannedOut,
    pages: outcome.pages,
  };
  logger.info("scheduler tick", { ...summary });
  for (const name of tickMetrics) metrics.addMetric(`Tick${name[0]?.toUpperCase()}${name.slice(1)}`, MetricUnit.Count, summary[name]);
  return summary;
});
