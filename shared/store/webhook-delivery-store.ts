import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { queryPage } from "#shared/store/pagination";

/** Delivery items live 30 days (TTL), long past the retry schedule. */
const DELIVERY_RETENTION_SECONDS = 30 * 24 * 3600;

export type DeliveryStatus = "pending" | "retrying" | "delivered" | "failed" | "disabled" | "dropped";

export interface DeliveryRecord {
  deliveryId: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  lastResponseCode: number | null;
  lastError: string | null;
  nextRetryAt: string | null;
  createdTime: string;
  updatedTime: string;
}

/** Creates the delivery item of (subscription, event) once: a replayed event leaves it as it is. */
export async function openDelivery(
  organizationId: string,
  webhookId: string,
  deliveryId: string,
  eventId: string,
  eventType: string,
  now: Date,
): Promise<void> {
  await documentClient().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.webhookDelivery(organizationId, webhookId, deliveryId),
      UpdateExpression:
        "SET entity = if_not_exists(entity, :entity), deliveryId = if_not_exists(deliveryId, :delivery), eventId = if_not_exists(eventId, :event), eventType = if_not_exists(eventType, :type), #status = if_not_exists(#status, :pending), attempts = if_not_exists(attempts, :zero), lastResponseCode = if_not_exists(lastResponseCode, :null), lastError = if_not_exists(lastError, :null), nextRetryAt = if_not_exists(nextRetryAt, :null), createdTime = if_not_exists(createdTime, :now), updatedTime = if_not_exists(updatedTime, :now), expiresAt = if_not_exists(expiresAt, :expires)",
      ExpressionAttributeNames: { "#status": "status" },
      ExpressionAttributeValues: {
        ":entity": "webhookDelivery",
        ":delivery": deliveryId,
        ":event": eventId,
        ":type": eventType,
        ":pending": "pending",
        ":zero": 0,
        ":null": null,
        ":now": now.toISOString(),
        ":expires": Math.floor(now.getTime() / 1000) + DELIVERY_RETENTION_SECONDS,
      },
    }),
  );
}

/** Records one attempt's outcome (attempts = the attempt's number, so a redelivered message does not count twice). */
export async function recordAttempt(
  organizationId: string,
  webhookId: string,
  deliveryId: string,
  outcome: { attempt: number; status: DeliveryStatus; responseCode: number | null; error: string | null; nextRetryAt: string | null },
  now: Date,
): Promise<void> {
  await documentClient().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.webhookDelivery(organizationId, webhookId, deliveryId),
      UpdateExpression:
        "SET #status = :status, attempts = :attempt, lastResponseCode = :code, lastError = :error, nextRetryAt = :next, updatedTime = :now",
      ExpressionAttributeNames: { "#status": "status" },
      ExpressionAttributeValues: {
        ":status": outcome.status,
        ":attempt": outcome.attempt,
        ":code": outcome.responseCode,
        ":error": outcome.error,
        ":next": outcome.nextRetryAt,
        ":now": now.toISOString(),
      },
    }),
  );
}

/** A subscription's deliveries, newest first. */
export async function listDeliveries(organizationId: string, webhookId: string, page: { limit: number; cursor?: string | undefined }) {
  const found = await queryPage<Record<string, unknown>>({
    partition: keys.webhookDeliveriesOf(organizationId, webhookId),
    sortKeyPrefix: keys.webhookDeliveryPrefix,
    newestFirst: true,
    limit: page.limit,
    cursor: page.cursor,
  });
  const items: DeliveryRecord[] = found.items.map((item) => ({
    deliveryId: String(item.deliveryId),
    eventId: String(item.eventId),
    eventType: String(item.eventType),
    status: item.status as DeliveryStatus,
    attempts: Number(item.attempts ?? 0),
    lastResponseCode: typeof item.lastResponseCode === "number" ? item.lastResponseCode : null,
    lastError: typeof item.lastError === "string" ? item.lastError : null,
    nextRetryAt: typeof item.nextRetryAt === "string" ? item.nextRetryAt : null,
    createdTime: String(item.createdTime),
    updatedTime: String(item.updatedTime),
  }));
  return { items, nextCursor: found.nextCursor };
}

/** Attempts of the organization's deliveries per UTC day (usage item, no tenant dimension in metrics). */
export async function meterAttempt(organizationId: string, now: Date): Promise<void> {
  const day = now.toISOString().slice(0, 10);
  await documentClient().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.webhookAttemptUsage(organizationId, day),
      UpdateExpression: "SET entity = :entity, #day = :day, expiresAt = if_not_exists(expiresAt, :expires) ADD attempts :one",
      ExpressionAttributeNames: { "#day": "day" },
      ExpressionAttributeValues: {
        ":entity": "webhookAttemptUsage",
        ":day": day,
        ":one": 1,
        ":expires": Math.floor(now.getTime() / 1000) + 400 * 24 * 3600,
      },
    }),
  );
}
