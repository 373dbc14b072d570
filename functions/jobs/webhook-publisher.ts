import type { DynamoDBStreamEvent } from "aws-lambda";
import { publishEvents } from "#shared/app/webhook-events";
import { eventsOfChange } from "#shared/domain/webhooks/state-changes";
import { type AttributeValue, plainImage } from "#shared/domain/webhooks/stream-image";
import { jobHandler, traceClients } from "#shared/observability/job-handler";
import { logger, metrics, MetricUnit } from "#shared/observability/powertools";
import { sqsClient } from "#shared/queue/sqs";
import { documentClient } from "#shared/store/dynamo";

traceClients(documentClient, sqsClient);

/**
 * The table's stream (filtered by the event source to the items that can mean an event) → domain
 * events on the bus and one delivery per matching subscription. A thrown error fails the batch,
 * which Lambda retries in order (at least once: a retried batch may publish an event again, with
 * the same id).
 *
 * Metrics (dimension job=webhook-publisher): `EventsPublished`.
 */
export const handler = jobHandler("webhook-publisher", async (event: DynamoDBStreamEvent): Promise<void> => {
  const events = event.Records.flatMap((record) =>
    eventsOfChange(
      plainImage(record.dynamodb?.OldImage as Record<string, AttributeValue> | undefined),
      plainImage(record.dynamodb?.NewImage as Record<string, AttributeValue> | undefined),
      new Date((record.dynamodb?.ApproximateCreationDateTime ?? Date.now() / 1000) * 1000),
    ),
  );
  await publishEvents(events);
  if (events.length > 0) logger.info("events published", { events: events.map((stored) => ({ id: stored.id, type: stored.event.type })) });
  metrics.addMetric("EventsPublished", MetricUnit.Count, events.length);
});
