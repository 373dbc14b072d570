import { randomUUID } from "node:crypto";
import { appConfig } from "#shared/config/env";
import { logger } from "#shared/observability/powertools";
import { type StoredEvent, scopeAdmits } from "#shared/domain/webhooks/events";
import { type DeliveryMessage, hopToward, nextAttempt, parseRetrySchedule } from "#shared/domain/webhooks/delivery";
import { sealingContext } from "#shared/domain/webhooks/sealing";
import { signDelivery } from "#shared/domain/webhooks/signing";
import { sendWebhook } from "#shared/http/webhook-sender";
import { eventBus } from "#shared/queue/event-bus";
import { sqsSdk } from "#shared/queue/sqs-sdk";
import { maxWebhooksOf, webhookSealer } from "#shared/app/webhooks";
import { meterAttempt, openDelivery, recordAttempt } from "#shared/store/webhook-delivery-store";
import { dynamoWebhookStore, webhooksOf } from "#shared/store/webhook-store";
import { dynamoScheduleStore } from "#shared/store/schedule-store";
import { dynamoConfigurationStore } from "#shared/store/configuration-store";

/**
 * The publisher (fed by the table's stream) and the delivery worker (fed by the webhook queue).
 */

/** The delivery id: the event's time first, so a subscription's deliveries list newest first. */
export const deliveryIdOf = (event: StoredEvent) => `${event.event.timestamp}_${event.id}`;

async function sendDeliveries(messages: Array<{ message: DeliveryMessage; delaySeconds: number }>): Promise<void> {
  if (messages.length === 0) return;
  const { client, sdk } = await sqsSdk();
  for (let i = 0; i < messages.length; i += 10) {
    const batch = messages.slice(i, i + 10);
    const output = await client.send(
      new sdk.SendMessageBatchCommand({
        QueueUrl: appConfig().WEBHOOK_QUEUE_URL,
        Entries: batch.map((entry, index) => ({
          Id: String(index),
          MessageBody: JSON.stringify(entry.message),
          DelaySeconds: entry.delaySeconds,
        })),
      }),
    );
    if ((output.Failed ?? []).length > 0) throw new Error(`SQS refused ${output.Failed?.length} webhook deliveries`);
  }
}

/**
 * A skipped run's claim names only its schedule: its hub is the hub of the schedule's profile, read
 * now (null, organization-wide, when the schedule or its profile is gone).
 */
async function withHub(event: StoredEvent): Promise<StoredEvent> {
  if (event.event.type !== "routing.schedule.skipped" || event.event.data.hubId !== null) return event;
  const schedule = await dynamoScheduleStore.find(event.organizationId, event.event.data.scheduleId);
  const profileId = schedule?.schedule.configurationId;
  const profile = profileId ? await dynamoConfigurationStore.find(event.organizationId, profileId) : undefined;
  const hubId = profile?.configuration.hubId ?? null;
  return { ...event, event: { ...event.event, data: { ...event.event.data, hubId } } };
}

/**
 * Puts the events on the bus and enqueues one delivery per enabled subscription of the event's
 * organization that names its type and whose hub scope holds the event's hub (a hub-scoped
 * subscription never receives organization-wide events; only that organization's subscriptions are read). A replayed
 * stream record enqueues again (at least once); the receiver deduplicates by `webhook-id`.
 */
export async function publishEvents(changes: readonly StoredEvent[], now: Date = new Date()): Promise<void> {
  if (changes.length === 0) return;
  const events = await Promise.all(changes.map(withHub));
  await eventBus().put(events);
  const byOrganization = new Map<string, StoredEvent[]>();
  for (const event of events) byOrganization.set(event.organizationId, [...(byOrganization.get(event.organizationId) ?? []), event]);
  const messages: Array<{ message: DeliveryMessage; delaySeconds: number }> = [];
  for (const [organizationId, ofOrganization] of byOrganization) {
    const subscriptions = (await webhooksOf(organizationId, await maxWebhooksOf(organizationId))).filter((webhook) => webhook.enabled);
    for (const event of ofOrganization) {
      for (const webhook of subscriptions.filter(
        (candidate) => candidate.events.includes(event.event.type) && scopeAdmits(candidate.hubIds, event.event),
      )) {
        const deliveryId = deliveryIdOf(event);
        await openDelivery(organizationId, webhook._id, deliveryId, event.id, event.event.type, now);
        messages.push({
          message: {
            organizationId,
            webhookId: webhook._id,
            eventId: event.id,
            eventType: event.event.type,
            deliveryId,
            body: JSON.stringify(event.event),
            attempt: 1,
          },
          delaySeconds: 0,
        });
      }
    }
  }
  await sendDeliveries(messages);
}

async function toDeadLetters(message: DeliveryMessage): Promise<void> {
  const url = appConfig().WEBHOOK_DEAD_LETTER_QUEUE_URL;
  if (!url) return;
  const { client, sdk } = await sqsSdk();
  await client.send(new sdk.SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(message) }));
}

/**
 * One delivery attempt. Waits longer than SQS's 15-minute delay are hops: the message goes back
 * with `notBefore` until it is due. A subscription deleted or disabled meanwhile drops the delivery.
 */
export async function deliverOnce(message: DeliveryMessage, now: Date = new Date()): Promise<void> {
  if (message.notBefore && new Date(message.notBefore) > now) {
    const hop = hopToward(new Date(message.notBefore), now);
    await sendDeliveries([
      { message: { ...message, ...(hop.notBefore ? { notBefore: hop.notBefore } : {}) }, delaySeconds: hop.delaySeconds },
    ]);
    return;
  }
  const { organizationId, webhookId, deliveryId } = message;
  const found = await dynamoWebhookStore.find(organizationId, webhookId);
  if (!found?.record.enabled) {
    if (found)
      await recordAttempt(
        organizationId,
        webhookId,
        deliveryId,
        { attempt: message.attempt - 1, status: "dropped", responseCode: null, error: "the webhook is disabled", nextRetryAt: null },
        now,
      );
    return;
  }
  const secret = await webhookSealer().open(found.record.sealedSecret, sealingContext(organizationId, webhookId));
  const headers = signDelivery(secret, message.eventId, now, message.body);
  const result = await sendWebhook(found.record.url, { ...headers }, message.body, appConfig().WEBHOOKS_ALLOW_LOOPBACK === "true");
  await meterAttempt(organizationId, now).catch((error: unknown) => logger.warn("webhook attempt not metered", { error }));
  const attempt = message.attempt;
  if (result.kind === "delivered") {
    await recordAttempt(
      organizationId,
      webhookId,
      deliveryId,
      { attempt, status: "delivered", responseCode: result.status, error: null, nextRetryAt: null },
      now,
    );
    return;
  }
  if (result.kind === "gone") {
    await dynamoWebhookStore
      .replace(
        { ...found.record, enabled: false, disabledReason: "the receiver answered 410 Gone", updatedTime: now.toISOString() },
        found.version,
      )
      .catch((error: unknown) => logger.warn("webhook not disabled (changed meanwhile)", { error }));
    await recordAttempt(
      organizationId,
      webhookId,
      deliveryId,
      { attempt, status: "disabled", responseCode: 410, error: "the receiver answered 410 Gone", nextRetryAt: null },
      now,
    );
    return;
  }
  const next = nextAttempt(parseRetrySchedule(appConfig().WEBHOOK_RETRY_SCHEDULE_SECONDS), attempt);
  if ("exhausted" in next) {
    await recordAttempt(
      organizationId,
      webhookId,
      deliveryId,
      { attempt, status: "failed", responseCode: result.status, error: result.reason, nextRetryAt: null },
      now,
    );
    await toDeadLetters(message);
    return;
  }
  const due = new Date(now.getTime() + next.delaySeconds * 1000);
  await recordAttempt(
    organizationId,
    webhookId,
    deliveryId,
    { attempt, status: "retrying", responseCode: result.status, error: result.reason, nextRetryAt: due.toISOString() },
    now,
  );
  const hop = hopToward(due, now);
  await sendDeliveries([
    {
      message: { ...message, attempt: attempt + 1, ...(hop.notBefore ? { notBefore: hop.notBefore } : {}) },
      delaySeconds: hop.delaySeconds,
    },
  ]);
}

/** POST /webhook/{id}/test: one `webhook.test` event to this subscription only (not on the bus). */
export async function sendTestEvent(
  organizationId: string,
  webhookId: string,
  now: Date = new Date(),
): Promise<{ deliveryId: string; eventId: string }> {
  const eventId = `evt_test_${randomUUID().replaceAll("-", "")}`;
  const body = JSON.stringify({ type: "webhook.test", timestamp: now.toISOString(), data: { organizationId, webhookId } });
  const deliveryId = `${now.toISOString()}_${eventId}`;
  await openDelivery(organizationId, webhookId, deliveryId, eventId, "webhook.test", now);
  await sendDeliveries([
    { message: { organizationId, webhookId, eventId, eventType: "webhook.test", deliveryId, body, attempt: 1 }, delaySeconds: 0 },
  ]);
  return { deliveryId, eventId };
}
