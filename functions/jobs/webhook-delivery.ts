import * as z from "zod/mini";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { deliverOnce } from "#shared/app/webhook-events";
import { appConfig } from "#shared/config/env";
import { jobHandler, traceClients } from "#shared/observability/job-handler";
import { logger, metrics, MetricUnit } from "#shared/observability/powertools";
import { webhookWorkerTimeoutSeconds } from "#shared/queue/definitions";
import { type FairPool, fairPool, workFairly } from "#shared/queue/fair-worker";
import { sqsClient } from "#shared/queue/sqs";
import { parseMessageBody } from "#shared/queue/sqs-batch";
import { documentClient } from "#shared/store/dynamo";

traceClients(documentClient, sqsClient);

const deliveryMessageSchema = z.object({
  organizationId: z.string(),
  webhookId: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  deliveryId: z.string(),
  body: z.string(),
  attempt: z.int().check(z.minimum(1)),
  notBefore: z.optional(z.string()),
  /** Times the fair share sent this attempt back (shared/queue/fair-worker.ts). */
  deferrals: z.optional(z.int().check(z.minimum(0))),
});

/**
 * SQS worker of the webhook queue: one attempt per message. The batch's attempts run side by side,
 * so a receiver that takes its whole 10 s delays no other message of the batch; a failed attempt
 * goes back to the queue with its retry delay (never blocks the queue). A message whose attempt
 * could not even be recorded (the table refused) is redelivered by SQS and after the queue's
 * maxReceiveCount lands in the dead-letter queue, like an exhausted delivery.
 * With WEBHOOK_WORKER_SLOTS_PER_TENANT (set by the stack), one organization's attempts hold at most
 * that many of the workers' attempt slots: a tenant whose receivers hang for their 10 s delays another
 * tenant's deliveries by at most one slot (the run workers' fair share, shared/queue/fair-worker.ts).
 *
 * Metrics (dimension job=webhook-delivery): `DeliveryAttempts`, `DeliveryErrors`, `DeliveryDeferred`.
 */
export const handler = jobHandler("webhook-delivery", async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const outcomes = await Promise.allSettled(
    event.Records.map(async (record) => {
      const message = parseMessageBody(record, deliveryMessageSchema);
      if (!message) {
        logger.error("webhook queue message is not a delivery; acknowledged", { body: record.body });
        return;
      }
      const pool = webhookDeliveryPool();
      if (!pool) return deliverOnce(message);
      const fair = await workFairly(pool, { tenantId: message.organizationId, workKey: `${message.deliveryId}#${message.attempt}`, body: message }, () => deliverOnce(message));
      if (!fair.started) {
        logger.info("webhook delivery deferred: its organization holds its share of the delivery slots", { deliveryId: message.deliveryId, delaySeconds: fair.deferredForSeconds });
        metrics.addMetric("DeliveryDeferred", MetricUnit.Count, 1);
      }
    }),
  );
  const failures = outcomes.flatMap((outcome, index) => {
    if (outcome.status === "fulfilled") return [];
    logger.error("webhook delivery attempt failed to run; redelivered", { error: outcome.reason });
    return [{ itemIdentifier: event.Records[index]?.messageId as string }];
  });
  metrics.addMetric("DeliveryAttempts", MetricUnit.Count, event.Records.length);
  metrics.addMetric("DeliveryErrors", MetricUnit.Count, failures.length);
  return { batchItemFailures: failures };
});

let pool: FairPool | null | undefined;
/** The delivery workers' share per organization, when the stack gives one (WEBHOOK_WORKER_SLOTS_PER_TENANT). */
function webhookDeliveryPool(): FairPool | undefined {
  if (pool === undefined) {
    const cap = appConfig().WEBHOOK_WORKER_SLOTS_PER_TENANT;
    // A lease outlives an attempt's worker: a crashed worker's slot frees a minute after its timeout.
    pool = cap === undefined ? null : fairPool("webhook-delivery", appConfig().WEBHOOK_QUEUE_URL, cap, webhookWorkerTimeoutSeconds + 60);
  }
  return pool ?? undefined;
}
