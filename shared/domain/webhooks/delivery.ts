/**
 * Delivery of one event to one subscription, at least once: an attempt POSTs the event signed
 * anew; a 2xx ends it, 410 Gone disables the subscription, anything else (another status, a
 * timeout, a refused address) schedules the next attempt by the retry schedule until it runs out.
 */
export interface DeliveryMessage {
  organizationId: string;
  webhookId: string;
  /** The event's id: the `webhook-id` of every attempt. */
  eventId: string;
  /** The delivery item's id (GET /webhook/{id}/deliveries). */
  deliveryId: string;
  eventType: string;
  /** The exact JSON body every attempt sends (and signs). */
  body: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** ISO time before which the attempt must not run (waits longer than SQS's 15-minute delay hop). */
  notBefore?: string;
}

/**
 * Default schedule: seconds to wait before attempt 2, 3, …: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
 * 10 h (the Standard Webhooks guidance), 8 attempts over about 27.6 hours. WEBHOOK_RETRY_SCHEDULE_SECONDS
 * overrides it (tests use seconds).
 */
export const defaultRetryScheduleSeconds = [5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const;

/** SQS's longest message delay: longer waits are chained hops. */
export const MAX_SQS_DELAY_SECONDS = 900;
/** The longest one attempt may take (connect to last byte). */
export const ATTEMPT_TIMEOUT_MS = 10_000;

export function parseRetrySchedule(text: string | undefined): number[] {
  if (!text) return [...defaultRetryScheduleSeconds];
  const delays = text.split(",").map((part) => Number(part.trim()));
  if (delays.length === 0 || delays.length > 20 || delays.some((delay) => !Number.isInteger(delay) || delay < 0 || delay > 86_400)) {
    throw new Error("WEBHOOK_RETRY_SCHEDULE_SECONDS must be 1–20 comma-separated whole seconds, each 0–86400");
  }
  return delays;
}

export type AttemptResult =
  | { kind: "delivered"; status: number }
  | { kind: "gone"; status: 410 }
  | { kind: "failed"; status: number | null; reason: string };

export function classifyAnswer(status: number): AttemptResult {
  if (status >= 200 && status < 300) return { kind: "delivered", status };
  if (status === 410) return { kind: "gone", status: 410 };
  return { kind: "failed", status, reason: `the receiver answered ${status}` };
}

/** What follows a failed attempt: the next attempt after `delaySeconds`, or no more (`exhausted`). */
export function nextAttempt(schedule: readonly number[], failedAttempt: number): { delaySeconds: number } | { exhausted: true } {
  const delay = schedule[failedAttempt - 1];
  return delay === undefined ? { exhausted: true } : { delaySeconds: delay };
}

/** The SQS delay of the next hop toward `due`, and whether the message must carry `notBefore` (a longer wait). */
export function hopToward(due: Date, now: Date): { delaySeconds: number; notBefore?: string } {
  const remaining = Math.max(0, Math.ceil((due.getTime() - now.getTime()) / 1000));
  return remaining <= MAX_SQS_DELAY_SECONDS
    ? { delaySeconds: remaining }
    : { delaySeconds: MAX_SQS_DELAY_SECONDS, notBefore: due.toISOString() };
}
