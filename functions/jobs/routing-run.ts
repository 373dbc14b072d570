import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { runWorkerPorts } from "#shared/app/run-worker";
import { processRunMessage, type RunWorkerPorts, shouldRetry } from "#shared/domain/runs/run-worker";
import { type DuePageMessage, runQueueMessageSchema } from "#shared/domain/runs/messages";
import { handleDueEntries, type SchedulerTickPorts } from "#shared/domain/runs/scheduler-tick";
import { schedulerTickPorts } from "#shared/app/scheduler-tick";
import { s3Client } from "#shared/blob/s3";
import { jobHandler, traceClients } from "#shared/observability/job-handler";
import { logger, metrics, MetricUnit } from "#shared/observability/powertools";
import { runQueueDefinition, runWorkerTimeoutSeconds } from "#shared/queue/definitions";
import type { RoutingProblem, RoutingSolution, SolveOptions } from "#shared/routing/model";
import { documentClient } from "#shared/store/dynamo";
import { sqsClient } from "#shared/queue/sqs";
import { parseMessageBody, processSqsBatch, RedeliverMessage } from "#shared/queue/sqs-batch";

traceClients(documentClient, s3Client, sqsClient);

/**
 * SQS worker of the routing-run queue (schedule runs, on-demand runs, and the tick's fan-out pages of
 * due schedules, which it claims, sends and advances like the tick). Reports partial batch
 * failures: a message whose run failed (or whose slot another delivery is running) is retried by
 * SQS and, after maxReceiveCount deliveries, moves to the dead-letter queue. A message that is not
 * a run message is logged and acknowledged (retrying cannot fix it).
 *
 * Metrics (dimension job=routing-run): one count per run outcome (`RunDone`, `RunSkipped`,
 * `RunFailed`, `RunIgnored`, `RunBusy`, `RunInvalidMessage`), and per optimizer call
 * `OptimizerSeconds` and `VisitsPlanned` (the visits given to it).
 */
export function createRoutingRunHandler(
  ports: () => RunWorkerPorts,
  maxReceiveCount: number = runQueueDefinition.maxReceiveCount,
  tickPorts: (now: Date) => SchedulerTickPorts = schedulerTickPorts,
) {
  return jobHandler("routing-run", async (event: SQSEvent, context: Partial<Pick<Context, "getRemainingTimeInMillis">>): Promise<SQSBatchResponse> => {
    const startedAt = Date.now();
    const remainingTimeMs = () => context.getRemainingTimeInMillis?.() ?? runWorkerTimeoutSeconds * 1000 - (Date.now() - startedAt);
    return processSqsBatch(event, async (record) => {
      if (await handleRecord(record)) throw new RedeliverMessage("routing run to retry");
    });

    /** True when the message must be delivered again. */
    async function handleRecord(record: SQSRecord): Promise<boolean> {
      const message = parseMessageBody(record, runQueueMessageSchema);
      if (!message) {
        logger.error("routing run message is not a run message; acknowledged", { body: record.body });
        metrics.addMetric("RunInvalidMessage", MetricUnit.Count, 1);
        return false;
      }
      if (message.kind === "duePage") return handleDuePage(message);
      const delivery = { receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? 1), maxReceiveCount, remainingTimeMs };
      try {
        const outcome = await processRunMessage(measured(ports()), message, delivery);
        logger.info("routing run", { runMessage: message, ...outcome });
        metrics.addMetric(outcomeMetric[outcome.outcome], MetricUnit.Count, 1);
        return shouldRetry(outcome);
      } catch (error) {
        logger.error("routing run failed before its outcome could be recorded; retried", { runMessage: message, error });
        metrics.addMetric(outcomeMetric.failed, MetricUnit.Count, 1);
        return true;
      }
    }

    /** A page the tick fanned out: failing (e.g. SQS down) releases the un-sent claims and retries the page. */
    async function handleDuePage(page: DuePageMessage): Promise<boolean> {
      const now = new Date();
      try {
        const outcome = await handleDueEntries(tickPorts(now), page.entries, now);
        logger.info("due page", { tickTime: page.tickTime, entries: page.entries.length, enqueued: outcome.enqueued.length, alreadyClaimed: outcome.alreadyClaimed, missed: outcome.missed, failed: outcome.failed });
        return false;
      } catch (error) {
        logger.error("due page failed; retried", { tickTime: page.tickTime, entries: page.entries.length, error });
        return true;
      }
    }
  });
}

const outcomeMetric = { done: "RunDone", skipped: "RunSkipped", failed: "RunFailed", ignored: "RunIgnored", busy: "RunBusy" } as const;

/** The worker's ports with the optimizer call measured. */
function measured(ports: RunWorkerPorts): RunWorkerPorts {
  return {
    ...ports,
    solve: async (problem: RoutingProblem, options: SolveOptions): Promise<RoutingSolution> => {
      const startedAt = performance.now();
      const solution = await ports.solve(problem, options);
      metrics.addMetric("OptimizerSeconds", MetricUnit.Seconds, (performance.now() - startedAt) / 1000);
      metrics.addMetric("VisitsPlanned", MetricUnit.Count, problem.visits.length);
      return solution;
    },
  };
}

export const handler = createRoutingRunHandler(() => runWorkerPorts());
