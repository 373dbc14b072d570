import type { DynamoDBStreamEvent } from "aws-lambda";
import { recordDispatchHistory } from "#shared/app/visits";
import { publishEvents } from "#shared/app/webhook-events";
import { dispatchHistoryEntryOf } from "#shared/domain/visits/dispatch-history";
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
 * The same records carry the visits' dispatches, whose history entries are written here
 * (shared/domain/visits/dispatch-history.ts): the stream is what makes them as sure as the dispatch.
 *
 * Metrics (dimension job=webhook-publisher): `EventsPublished`, `DispatchHistoryEntries`.
 */
export const handler = jobHandler("webhook-publisher", async (event: DynamoDBStreamEvent): Promise<void> => {
  const changes = event.Records.map((record) => ({
    before: plainImage(record.dynamodb?.OldImage as Record<string, AttributeValue> | undefined),
    after: plainImage(record.dynamodb?.NewImage as Record<string, AttributeValue> | undefined),
    at: new Date((record.dynamodb?.ApproximateCreationDateTime ?? Date.now() / 1000) * 1000),
  }));
  const dispatches = changes.flatMap(({ before, after }) => dispatchHistoryEntryOf(before, after) ?? []);
  await recordDispatchHistory(dispatches);
  const events = changes.flatMap(({ before, after, at }) => eventsOfChange(before, after, at));
  await publishEvents(events);
  if (events.length > 0) logger.info("events published", { events: events.map((stored) => ({ id: stored.id, type: stored.event.type })) });
  metrics.addMetric("EventsPublished", MetricUnit.Count, events.length);
  metrics.addMetric("DispatchHistoryEntries", MetricUnit.Count, dispatches.length);
});
