import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { runWorkerPorts } from "#shared/app/run-worker";
import { type DeliveryContext, processRunMessage, type RunWorkerPorts, shouldRetry } from "#shared/domain/runs/run-worker";
import { type DuePageMessage, type RunQueueMessage, runQueueMessageSchema } from "#shared/domain/runs/messages";
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
import { appConfig } from "#shared/config/env";
import { type FairPool, fairPool, workFairly } from "#shared/queue/fair-worker";
import { onDemandRunKey, scheduleRunKey } from "#shared/domain/runs/active-runs";

traceClients(documentClient, s3Client, sqsClient);

/**
 * SQS worker of the routing-run queue (schedule runs, on-demand runs, and the tick's fan-out pages of
 * due schedules, which it claims, sends and advances like the tick). Reports partial batch
 * failures: a message whose run failed (or whose slot another delivery is running) is retried by
 * SQS and, after maxReceiveCount deliveries, moves to the dead-letter queue. A message that is not
 * a run message is logged and acknowledged (retrying cannot fix it).
 *
 * Metrics (dimension job=routing-run): `RunDone`, `RunSkipped`, `RunFailed` (the outcomes an
 * operator acts on; ignored, busy and invalid messages are only logged) and `OptimizerSeconds` per
 * optimizer call; `RunDeferred` when a run was sent back because its organization held its share of
 * the workers (shared/queue/fair-worker.ts); `PlanRejected` when a plan failed the checks before it was stored
 * (logged with its seed and violations; alarmed: infra/constructs/alarms.ts, planRejectedAlarm).
 */
export function createRoutingRunHandler(
  ports: () => RunWorkerPorts,
  maxReceiveCount: number = runQueueDefinition.maxReceiveCount,
  tickPorts: (now: Date) => SchedulerTickPorts = schedulerTickPorts,
  fairness: () => FairPool | undefined = runWorkerPool,
) {
  return jobHandler(
    "routing-run",
    async (event: SQSEvent, context: Partial<Pick<Context, "getRemainingTimeInMillis">>): Promise<SQSBatchResponse> => {
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
          return false;
        }
        if (message.kind === "duePage") return handleDuePage(message);
        const delivery = { receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? 1), maxReceiveCount, remainingTimeMs };
        const pool = fairness();
        if (!pool) return runMessage(message, delivery);
        const workKey = message.kind === "schedule" ? scheduleRunKey(message.scheduleId, message.slot) : onDemandRunKey(message.resultId);
        const fair = await workFairly(pool, { tenantId: message.organizationId, workKey, body: message }, () =>
          runMessage(message, delivery),
        );
        if (fair.started) return fair.value;
        logger.info("routing run deferred: its organization holds its share of the workers", {
          runMessage: message,
          delaySeconds: fair.deferredForSeconds,
        });
        metrics.addMetric("RunDeferred", MetricUnit.Count, 1);
        return false;
      }

      async function runMessage(message: RunQueueMessage, delivery: DeliveryContext): Promise<boolean> {
        try {
          const outcome = await processRunMessage(measured(ports()), message, delivery);
          logger.info("routing run", { runMessage: message, ...outcome });
          const metric = outcomeMetric[outcome.outcome];
          if (metric) metrics.addMetric(metric, MetricUnit.Count, 1);
          return shouldRetry(outcome);
        } catch (error) {
          logger.error("routing run failed before its outcome could be recorded; retried", { runMessage: message, error });
          metrics.addMetric("RunFailed", MetricUnit.Count, 1);
          return true;
        }
      }

      /** A page the tick fanned out: failing (e.g. SQS down) releases the un-sent claims and retries the page. */
      async function handleDuePage(page: DuePageMessage): Promise<boolean> {
        const now = new Date();
        try {
          const outcome = await handleDueEntries(tickPorts(now), page.entries, now);
          logger.info("due page", {
            tickTime: page.tickTime,
            entries: page.entries.length,
            enqueued: outcome.enqueued.length,
            alreadyClaimed: outcome.alreadyClaimed,
            missed: outcome.missed,
            failed: outcome.failed,
          });
          return false;
        } catch (error) {
          logger.error("due page failed; retried", { tickTime: page.tickTime, entries: page.entries.length, error });
          return true;
        }
      }
    },
  );
}

const outcomeMetric: Record<string, string | undefined> = { done: "RunDone", skipped: "RunSkipped", failed: "RunFailed" };

/** The worker's ports with the optimizer call measured and rejected plans logged and counted. */
function measured(ports: RunWorkerPorts): RunWorkerPorts {
  return {
    ...ports,
    planRejected: (report) => {
      logger.error("routing run: the optimizer's plan failed its checks and was not stored", { ...report });
      metrics.addMetric("PlanRejected", MetricUnit.Count, 1);
      ports.planRejected?.(report);
    },
    solve: async (problem: RoutingProblem, options: SolveOptions): Promise<RoutingSolution> => {
      const startedAt = performance.now();
      const solution = await ports.solve(problem, options);
      metrics.addMetric("OptimizerSeconds", MetricUnit.Seconds, (performance.now() - startedAt) / 1000);
      return solution;
    },
  };
}

/** The run worker's share per organization, when the stack gives one (RUN_WORKER_SLOTS_PER_TENANT). */
function runWorkerPool(): FairPool | undefined {
  const cap = appConfig().RUN_WORKER_SLOTS_PER_TENANT;
  // A lease outlives the worker's timeout: a crashed worker's slot frees a minute after it would have timed out.
  // A run found over its organization's share moves to the spillover queue (read by that share's workers only), so it
  // is not passed over again by the workers of the run queue.
  return cap === undefined
    ? undefined
    : fairPool("routing-run", appConfig().RUN_SPILLOVER_QUEUE_URL || appConfig().RUN_QUEUE_URL, cap, runWorkerTimeoutSeconds + 60);
}

export const handler = createRoutingRunHandler(() => runWorkerPorts());
