/**
 * The routing-run queue and its dead-letter queue as plain data, used by the CDK stack and by the
 * local runtime alike.
 */
export const runWorkerTimeoutSeconds = 300;

export const runQueueDefinition = {
  queueName: "routing-runs",
  deadLetterQueueName: "routing-runs-dlq",
  /** AWS recommends at least 6× the consumer's timeout so a batch is never redelivered while it is still running. */
  visibilityTimeoutSeconds: runWorkerTimeoutSeconds * 6,
  /** Deliveries before a message moves to the dead-letter queue. */
  maxReceiveCount: 3,
  messageRetentionSeconds: 4 * 24 * 3600,
  deadLetterRetentionSeconds: 14 * 24 * 3600,
  batchSize: 1,
} as const;
