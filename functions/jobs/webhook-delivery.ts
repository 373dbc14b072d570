import * as z from "zod/mini";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { deliverOnce } from "#shared/app/webhook-events";
import { jobHandler, traceClients } from "#shared/observability/job-handler";
import { logger, metrics, MetricUnit } from "#shared/observability/powertools";
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
});

/**
 * SQS worker of the webhook queue: one attempt per message. The batch's attempts run side by side,
 * so a receiver that takes its whole 10 s delays no other message of the batch; a failed attempt
 * goes back to the queue with its retry delay (never blocks the queue). A message whose attempt
 * could not even be recorded (the table refused) is redelivered by SQS and after the queue's
 * maxReceiveCount lands in the dead-letter queue, like an exhausted delivery.
 *
 * Metrics (dimension job=webhook-delivery): `DeliveryAttempts`, `DeliveryErrors`.
 */
export const handler = jobHandler("webhook-delivery", async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const outcomes = await Promise.allSettled(
    event.Records.map(async (record) => {
      const message = parseMessageBody(record, deliveryMessageSchema);
      if (!message) {
        logger.error("webhook queue message is not a delivery; acknowledged", { body: record.body });
        return;
      }
      await deliverOnce(message);
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
