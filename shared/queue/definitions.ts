import { tenantSlotCap } from "#shared/domain/fairness/worker-slots";

/**
 * The routing-run queue and its dead-letter queue as plain data, used by the CDK stack and by the
 * local runtime alike.
 */
export const runWorkerTimeoutSeconds = 300;

/**
 * The run worker's memory (CDK context `runWorkerMemoryMb`, 128–10,240). A 1,500-visit run peaks at ~165 MB
 * RSS (measured, whole process). Lambda gives CPU in proportion to memory (one vCPU at 1,769 MB): a run that stops
 * early costs about the same at any size, while one that uses its whole budget (beyond ~150 visits) plans
 * 3–5 % worse on a third of a vCPU (512 MB), so the default is one full vCPU. See docs/api/routing-runs.md,
 * "CPU by run size".
 */
export const defaultRunWorkerMemoryMb = 1769;

export function runWorkerMemoryMb(context: unknown): number {
  const memory = Number(context ?? defaultRunWorkerMemoryMb);
  if (!Number.isInteger(memory) || memory < 128 || memory > 10_240)
    throw new Error(`runWorkerMemoryMb must be an integer 128–10240, got ${String(context)}`);
  return memory;
}

export const runQueueDefinition = {
  queueName: "routing-runs",
  deadLetterQueueName: "routing-runs-dlq",
  /** AWS recommends at least 6× the consumer's timeout so a batch is never redelivered while it is still running. */
  visibilityTimeoutSeconds: runWorkerTimeoutSeconds * 6,
  /** Deliveries before a message moves to the dead-letter queue. */
  maxReceiveCount: 3,
  /** SQS's maximum: a run waiting this long is deleted unseen, so the age alarm (below) fires long before. */
  messageRetentionSeconds: 14 * 24 * 3600,
  deadLetterRetentionSeconds: 14 * 24 * 3600,
  batchSize: 1,
  /** The oldest waiting run older than this (3 periods of 5 minutes) alarms: runs wait behind a backlog. */
  oldestMessageAlarmSeconds: 15 * 60,
} as const;

/**
 * The spillover queue of the run worker: the runs of an organization beyond its share of the workers
 * (shared/domain/fairness/worker-slots.ts, `sharedQueueRoom`), and the runs a worker found over that
 * share. Read by the same worker with a concurrency of one organization's share, so working it never
 * takes the worker that is kept for the others. Failed runs go to the run queue's dead-letter queue.
 */
export const runSpilloverQueueDefinition = {
  queueName: "routing-runs-spillover",
  visibilityTimeoutSeconds: runWorkerTimeoutSeconds * 6,
  maxReceiveCount: 3,
  /** SQS's maximum, like the run queue's. */
  messageRetentionSeconds: 14 * 24 * 3600,
  batchSize: 1,
  /**
   * A flooding organization's backlog drains here at its share's pace, so its oldest run may wait long;
   * one waiting 3 hours (half its 6-hour active-run lease) means the backlog is not draining. A deferral
   * sends a run again as a new message (its age starts over), but deferrals happen only while the
   * organization's runs are being worked; a backlog nobody works is never deferred and ages into the alarm.
   */
  oldestMessageAlarmSeconds: 3 * 3600,
} as const;

/** The spillover queue's readers: one organization's share of `maxConcurrency` workers (SQS's event source takes at least 2). */
export function spilloverMaxConcurrency(share: number): number {
  return Math.max(2, share);
}

/**
 * The tick's fan-out pages of due schedules (more due than one tick handles): their own queue, read by
 * the run worker with its own small concurrency, so a page never waits behind the runs of the queue.
 * A page that fails 3 deliveries goes to the run queue's dead-letter queue (a redrive returns each
 * message to the queue it came from).
 */
export const duePageQueueDefinition = {
  queueName: "routing-due-pages",
  /** A page claims and sends up to 2,000 runs in a few seconds; the worker's timeout bounds it. */
  visibilityTimeoutSeconds: runWorkerTimeoutSeconds * 6,
  maxReceiveCount: 3,
  /** A page older than a day is useless (its schedules were advanced as missed by later ticks). */
  messageRetentionSeconds: 24 * 3600,
  batchSize: 1,
  maxConcurrency: 2,
  /** Pages are handled within seconds; one waiting 5 minutes means the worker cannot take them. */
  oldestMessageAlarmSeconds: 5 * 60,
} as const;

/** A message in a dead-letter queue older than this alarms: a week before the queue's 14-day retention drops it. */
export const deadLetterOldestMessageAlarmSeconds = 7 * 24 * 3600;

/**
 * Run workers at most running at once (the SQS event source's maximum concurrency), so a burst of
 * runs cannot take the account's Lambda concurrency from the API. CDK context `runWorkerMaxConcurrency`
 * overrides it (SQS allows 2–1000).
 */
export const defaultRunWorkerMaxConcurrency = 20;

/**
 * How long a run counts against its organization's cap of active runs when nothing releases it: a
 * worker that crashed on the run's last delivery (message in the dead-letter queue) frees the slot
 * after this; a run still waiting in the queue longer than this no longer counts.
 */
export const activeRunLeaseSeconds = 6 * 3600;

/** The legacy-import worker's Lambda timeout: one page of 500 records takes a few seconds. */
export const importWorkerTimeoutSeconds = 120;

/** The legacy-import queue (docs/api/legacy-import.md): one message per import step, beside the run queue. */
export const importQueueDefinition = {
  queueName: "legacy-imports",
  deadLetterQueueName: "legacy-imports-dlq",
  visibilityTimeoutSeconds: importWorkerTimeoutSeconds * 6,
  /** On the last delivery a failing page fails its import (rolled back) instead of retrying. */
  maxReceiveCount: 3,
  messageRetentionSeconds: 14 * 24 * 3600,
  deadLetterRetentionSeconds: 14 * 24 * 3600,
  batchSize: 1,
  /** A step waiting this long (3 periods of 5 minutes) alarms: imports are not progressing. */
  oldestMessageAlarmSeconds: 15 * 60,
  /** Imports at most running at once (each import runs one step at a time). */
  maxConcurrency: 5,
} as const;

/** The webhook delivery worker's Lambda timeout: a batch's attempts run side by side, each ≤ 10 s. */
export const webhookWorkerTimeoutSeconds = 30;

/**
 * The webhook delivery queue: one message per attempt (a failed attempt sends the next one with
 * its delay). Redrive catches attempts that could not even run (the table refused their record);
 * exhausted deliveries are sent to the dead-letter queue by the worker itself.
 */
export const webhookQueueDefinition = {
  queueName: "webhook-deliveries",
  deadLetterQueueName: "webhook-deliveries-dlq",
  visibilityTimeoutSeconds: webhookWorkerTimeoutSeconds * 6,
  maxReceiveCount: 5,
  messageRetentionSeconds: 4 * 24 * 3600,
  deadLetterRetentionSeconds: 14 * 24 * 3600,
  batchSize: 10,
  /** Delivery workers at most running at once: attempts wait on receivers, not on CPU. */
  maxConcurrency: 20,
} as const;

/**
 * The delivery workers (invocations) one organization's attempts may hold at once, of `workers`:
 * all but one. A worker is busy until every attempt of its batch ended, so the share is counted in
 * workers, not attempts: when an organization's receivers hang, the worker left over sends its
 * messages back at once and reaches another organization's message behind them.
 */
export function webhookSlotsPerTenant(workers: number = webhookQueueDefinition.maxConcurrency): number {
  return tenantSlotCap(workers);
}
