import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { runWorkerPorts } from "#shared/app/routing-results";
import { processRunMessage, type RunWorkerPorts, shouldRetry } from "#shared/domain/runs/run-worker";
import { runQueueMessageSchema } from "#shared/domain/runs/messages";
import { logger } from "#shared/observability/logger";
import { runQueueDefinition, runWorkerTimeoutSeconds } from "#shared/queue/definitions";

/**
 * SQS worker of the routing-run queue (schedule runs and on-demand runs). Reports partial batch
 * failures: a message whose run failed (or whose slot another delivery is running) is retried by
 * SQS and, after maxReceiveCount deliveries, moves to the dead-letter queue. A message that is not
 * a run message is logged and acknowledged (retrying cannot fix it).
 */
export function createRoutingRunHandler(ports: () => RunWorkerPorts, maxReceiveCount: number = runQueueDefinition.maxReceiveCount) {
  return async (event: SQSEvent, context?: Pick<Context, "getRemainingTimeInMillis">): Promise<SQSBatchResponse> => {
    const startedAt = Date.now();
    const remainingTimeMs = () => context?.getRemainingTimeInMillis?.() ?? runWorkerTimeoutSeconds * 1000 - (Date.now() - startedAt);
    const failures: SQSBatchResponse["batchItemFailures"] = [];
    for (const record of event.Records) {
      logger.setContext({ job: "routing-run", messageId: record.messageId });
      if (await handleRecord(record)) failures.push({ itemIdentifier: record.messageId });
    }
    return { batchItemFailures: failures };

    async function handleRecord(record: SQSRecord): Promise<boolean> {
      let body: unknown;
      try {
        body = JSON.parse(record.body);
      } catch {
        body = undefined;
      }
      const parsed = runQueueMessageSchema.safeParse(body);
      if (!parsed.success) {
        logger.error("routing run message is not a run message; acknowledged", { body: record.body });
        return false;
      }
      const delivery = { receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? 1), maxReceiveCount, remainingTimeMs };
      try {
        const outcome = await processRunMessage(ports(), parsed.data, delivery);
        logger.info("routing run", { message: parsed.data, ...outcome });
        return shouldRetry(outcome);
      } catch (error) {
        logger.error("routing run failed before its outcome could be recorded; retried", { message: parsed.data, error: String(error) });
        return true;
      }
    }
  };
}

export const handler = createRoutingRunHandler(() => runWorkerPorts());
