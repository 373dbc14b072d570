import { streamEntities } from "#shared/domain/webhooks/state-changes";

/**
 * `npm run replay -- --aws <source>`: put failed work back (docs/operations.md, "What is guaranteed").
 * The SQS dead-letter queues are redriven by SQS itself (a message move task); the stream
 * publisher's failure queue holds only the shard and sequence range of a failed batch, so its
 * records are read again from the table's stream (while it keeps them: 24 h) and handed to the
 * publisher function; a message is deleted only once its batch was published.
 */
export const replaySources = {
  /** Routing runs and due pages: each message back to the queue it came from (run, spillover or due page queue). */
  "run-dlq": { kind: "sqs", queueOutput: "RunDeadLetterQueue" },
  "import-dlq": { kind: "sqs", queueOutput: "ImportDeadLetterQueue", destinationOutput: "ImportQueueArn" },
  /** Deliveries the delivery worker gave up on are sent to the DLQ by the worker itself: back to the delivery queue by name. */
  "webhook-dlq": { kind: "sqs", queueOutput: "WebhookDeadLetterQueue", destinationOutput: "WebhookQueueArn" },
  "publisher-failures": { kind: "stream", queueOutput: "WebhookPublisherFailureQueue" },
} as const;
export type ReplaySource = keyof typeof replaySources;

export interface ReplayAws {
  stackOutputs(stackName: string): Promise<Record<string, string>>;
  /** SQS StartMessageMoveTask; without a destination each message returns to its source queue. */
  startMessageMove(sourceArn: string, destinationArn?: string): Promise<string>;
  receive(queueUrl: string): Promise<Array<{ receiptHandle: string; body: string }>>;
  deleteMessage(queueUrl: string, receiptHandle: string): Promise<void>;
  /** The stream records of a shard from `start` to `end` (inclusive); [] once the stream trimmed them. */
  streamRecords(streamArn: string, shardId: string, start: string, end: string): Promise<StreamRecord[]>;
  /** Lambda Invoke (RequestResponse); functionError when the function threw. */
  invoke(functionName: string, payload: unknown): Promise<{ functionError?: string }>;
}

export interface StreamRecord {
  eventID?: string;
  eventName?: string;
  dynamodb?: { NewImage?: Record<string, { S?: string }>; SequenceNumber?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface ReplayReport {
  source: ReplaySource;
  /** SQS sources: the move task's handle. */
  moveTask?: string;
  /** Stream source: batches republished, batches whose records the stream no longer holds, records handed over. */
  republished?: number;
  expired?: number;
  failed?: number;
  records?: number;
  messages: string[];
}

/** The failure record Lambda sends for a stream batch (on-failure destination). */
interface StreamFailure {
  DDBStreamBatchInfo?: { shardId: string; startSequenceNumber: string; endSequenceNumber: string; streamArn: string; batchSize?: number };
}

export async function replay(
  source: ReplaySource,
  options: { stackName: string; dropExpired?: boolean; maxBatches?: number },
  aws: ReplayAws,
): Promise<ReplayReport> {
  const outputs = await aws.stackOutputs(options.stackName);
  const definition = replaySources[source];
  const output = (name: string) => {
    const value = outputs[name];
    if (!value) throw new Error(`stack ${options.stackName} has no output ${name}: deploy this version first`);
    return value;
  };
  if (definition.kind === "sqs") {
    const destination = "destinationOutput" in definition ? output(definition.destinationOutput) : undefined;
    const moveTask = await aws.startMessageMove(output(`${definition.queueOutput}Arn`), destination);
    return { source, moveTask, messages: [`message move task ${moveTask} started from ${definition.queueOutput}`] };
  }
  const queueUrl = output(`${definition.queueOutput}Url`);
  const publisher = output("WebhookPublisherFunctionName");
  const report: ReplayReport = { source, republished: 0, expired: 0, failed: 0, records: 0, messages: [] };
  const maxBatches = options.maxBatches ?? 1000;
  const seen = new Set<string>();
  for (let handled = 0; handled < maxBatches; ) {
    const messages = (await aws.receive(queueUrl)).filter((message) => !seen.has(message.body));
    if (messages.length === 0) break;
    for (const message of messages) {
      handled += 1;
      // A message kept (expired or failed) becomes visible again later: count it once.
      seen.add(message.body);
      const info = (JSON.parse(message.body) as StreamFailure).DDBStreamBatchInfo;
      if (!info) {
        report.failed = (report.failed ?? 0) + 1;
        report.messages.push("a message without DDBStreamBatchInfo: kept");
        continue;
      }
      const range = `${info.shardId} ${info.startSequenceNumber}…${info.endSequenceNumber}`;
      const records = await aws.streamRecords(info.streamArn, info.shardId, info.startSequenceNumber, info.endSequenceNumber);
      if (records.length === 0) {
        report.expired = (report.expired ?? 0) + 1;
        report.messages.push(
          `${range}: the stream no longer holds these records (over 24 h)${options.dropExpired ? ": dropped" : ": kept"}`,
        );
        if (options.dropExpired) await aws.deleteMessage(queueUrl, message.receiptHandle);
        continue;
      }
      const relevant = records.filter((record) => streamEntities.includes(record.dynamodb?.NewImage?.entity?.S ?? ""));
      const result = relevant.length > 0 ? await aws.invoke(publisher, { Records: relevant }) : {};
      if (result.functionError) {
        report.failed = (report.failed ?? 0) + 1;
        report.messages.push(`${range}: the publisher failed again (${result.functionError}): kept`);
        continue;
      }
      await aws.deleteMessage(queueUrl, message.receiptHandle);
      report.republished = (report.republished ?? 0) + 1;
      report.records = (report.records ?? 0) + relevant.length;
      report.messages.push(`${range}: ${relevant.length} record(s) republished`);
    }
  }
  return report;
}
