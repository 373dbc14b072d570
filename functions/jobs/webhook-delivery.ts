import * as z from "zod/mini";
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { deliverOnce } from "#shared/app/webhook-events";
import { appConfig } from "#shared/config/env";
import { jobHandler, traceClients } from "#shared/observability/job-handler";
import { logger, metrics, MetricUnit } from "#shared/observability/powertools";
import { webhookWorkerTimeoutSeconds } from "#shared/queue/definitions";
import { deferralDelaySeconds } from "#shared/domain/fairness/worker-slots";
import { type FairPool, fairPool } from "#shared/queue/fair-worker";
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
type DeliveryMessageBody = z.infer<typeof deliveryMessageSchema>;

/**
 * SQS worker of the webhook queue: one attempt per message. The batch's attempts run side by side,
 * so a receiver that takes its whole 10 s delays no other message of the batch; a failed attempt
 * goes back to the queue with its retry delay (never blocks the queue). A message whose attempt
 * could not even be recorded (the table refused their record) is redelivered by SQS and after the
 * queue's maxReceiveCount lands in the dead-letter queue, like an exhausted delivery.
 *
 * Fair share (WEBHOOK_WORKER_SLOTS_PER_TENANT, set by the stack): a worker is busy until the last
 * attempt of its batch ends, so what one organization can take from the others is workers. Each
 * organization in the batch takes one slot of the pool for this invocation (the run workers' slots,
 * shared/queue/fair-worker.ts, keyed by the invocation) before its attempts start; an organization
 * holding its share of workers already gets its messages sent back with a delay (deferrals + 1)
 * instead. With the share at all workers but one, an organization whose receivers hang for their
 * 10 s holds at most that many workers, and the one left over passes its backlog back to the queue
 * and reaches the other organizations' messages behind it.
 *
 * Metrics (dimension job=webhook-delivery): `DeliveryAttempts`, `DeliveryErrors`, `DeliveryDeferred`.
 */
export const handler = jobHandler("webhook-delivery", async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  const byOrganization = new Map<string, Array<{ record: SQSRecord; message: DeliveryMessageBody }>>();
  for (const record of event.Records) {
    const message = parseMessageBody(record, deliveryMessageSchema);
    if (!message) {
      logger.error("webhook queue message is not a delivery; acknowledged", { body: record.body });
      continue;
    }
    byOrganization.set(message.organizationId, [...(byOrganization.get(message.organizationId) ?? []), { record, message }]);
  }
  const failures: SQSBatchResponse["batchItemFailures"] = [];
  const attempt = async (entries: Array<{ record: SQSRecord; message: DeliveryMessageBody }>) => {
    const outcomes = await Promise.allSettled(entries.map(({ message }) => deliverOnce(message)));
    outcomes.forEach((outcome, index) => {
      if (outcome.status === "fulfilled") return;
      logger.error("webhook delivery attempt failed to run; redelivered", { error: outcome.reason });
      failures.push({ itemIdentifier: entries[index]?.record.messageId as string });
    });
  };
  const pool = webhookDeliveryPool();
  await Promise.all(
    [...byOrganization].map(async ([organizationId, entries]) => {
      if (!pool) return attempt(entries);
      // One slot per organization and invocation: this worker, as long as any of its attempts runs.
      const workKey = `${context.awsRequestId ?? "local"}#${organizationId}`;
      let taken: boolean;
      try {
        taken = await pool.slots.take(organizationId, workKey);
      } catch (error) {
        logger.error("webhook delivery slot not taken; redelivered", { error });
        for (const { record } of entries) failures.push({ itemIdentifier: record.messageId });
        return;
      }
      if (!taken)
        return deferAll(
          pool,
          entries.map(({ message }) => message),
          failures,
          entries.map(({ record }) => record.messageId),
        );
      try {
        await attempt(entries);
      } finally {
        await pool.slots
          .release(organizationId, workKey)
          .catch((error: unknown) => logger.warn("webhook delivery slot not released (its lease ends it)", { error }));
      }
    }),
  );
  metrics.addMetric("DeliveryAttempts", MetricUnit.Count, event.Records.length);
  metrics.addMetric("DeliveryErrors", MetricUnit.Count, failures.length);
  return { batchItemFailures: failures };
});

/** Sends an organization's messages back with the fair share's delay; a message not sent back is redelivered by SQS. */
async function deferAll(
  pool: FairPool,
  messages: DeliveryMessageBody[],
  failures: SQSBatchResponse["batchItemFailures"],
  messageIds: string[],
): Promise<void> {
  await Promise.all(
    messages.map(async (message, index) => {
      const deferrals = message.deferrals ?? 0;
      const delaySeconds = deferralDelaySeconds(deferrals);
      try {
        await sqsClient().send(
          new SendMessageCommand({
            QueueUrl: pool.queueUrl,
            MessageBody: JSON.stringify({ ...message, deferrals: deferrals + 1 }),
            DelaySeconds: delaySeconds,
          }),
        );
        metrics.addMetric("DeliveryDeferred", MetricUnit.Count, 1);
      } catch (error) {
        logger.error("webhook delivery not deferred; redelivered", { error });
        failures.push({ itemIdentifier: messageIds[index] as string });
      }
    }),
  );
  logger.info("webhook deliveries deferred: their organization holds its share of the delivery workers", {
    organizationId: messages[0]?.organizationId,
    count: messages.length,
  });
}

let pool: FairPool | null | undefined;
/** The delivery workers' share per organization, when the stack gives one (WEBHOOK_WORKER_SLOTS_PER_TENANT). */
function webhookDeliveryPool(): FairPool | undefined {
  if (pool === undefined) {
    const cap = appConfig().WEBHOOK_WORKER_SLOTS_PER_TENANT;
    // A lease outlives an invocation: a crashed worker's slot frees a minute after its timeout.
    pool = cap === undefined ? null : fairPool("webhook-delivery", appConfig().WEBHOOK_QUEUE_URL, cap, webhookWorkerTimeoutSeconds + 60);
  }
  return pool ?? undefined;
}
