import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { Context, ScheduledEvent, SQSBatchResponse, SQSEvent } from "aws-lambda";
import { invokeHandler, jobContext } from "#local/invocation";
import { runQueueDefinition, runWorkerTimeoutSeconds } from "#shared/queue/definitions";

/**
 * What EventBridge and the SQS event source mapping do in AWS, done locally: call the tick
 * handler at every minute boundary, and feed the run queue's messages to the run worker, deleting
 * those it did not report as failed (failed ones become visible again after the visibility timeout
 * and, after maxReceiveCount deliveries, move to the dead-letter queue). The worker handed to the
 * poller may run elsewhere (local/stack.ts runs the run worker in a thread, see job-thread.ts).
 */
type TickHandler = (event: ScheduledEvent, context: Context) => Promise<unknown>;
type WorkerHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export interface LocalScheduler {
  stop(): Promise<void>;
}

function scheduledEvent(time: Date): ScheduledEvent {
  return {
    version: "0",
    id: crypto.randomUUID(),
    "detail-type": "Scheduled Event",
    source: "aws.events",
    account: "000000000000",
    time: time.toISOString(),
    region: process.env.AWS_REGION ?? "us-east-1",
    resources: ["arn:aws:events:local:000000000000:rule/scheduler-tick"],
    detail: {},
  };
}

/** One tick for the minute `at`, as EventBridge would deliver it (the tick reads "now" from the event). */
export async function tickOnce(loadTick: () => Promise<TickHandler>, at: Date): Promise<void> {
  await invokeHandler(await loadTick(), scheduledEvent(at), jobContext("scheduler-tick", 55));
}

export function startMinuteTicker(loadTick: () => Promise<TickHandler>, onError: (error: unknown) => void): LocalScheduler {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const scheduleNext = () => {
    if (stopped) return;
    const delay = 60_000 - (Date.now() % 60_000);
    timer = setTimeout(async () => {
      try {
        await tickOnce(loadTick, new Date());
      } catch (error) {
        onError(error);
      }
      scheduleNext();
    }, delay);
  };
  scheduleNext();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

export function startQueuePoller(
  sqs: SQSClient,
  queueUrl: string,
  queueArn: string,
  loadWorker: () => Promise<WorkerHandler>,
  onError: (error: unknown) => void,
  job: { name: string; timeoutSeconds: number; batchSize: number; concurrency?: number } = {
    name: "routing-run",
    timeoutSeconds: runWorkerTimeoutSeconds,
    batchSize: runQueueDefinition.batchSize,
  },
): LocalScheduler {
  let stopped = false;
  // `concurrency` pollers side by side, as the event source runs up to its maximum concurrency of
  // invocations at once: a batch still being worked holds only its own poller.
  const loops = Array.from({ length: job.concurrency ?? 1 }, () => pollLoop());
  async function pollLoop() {
    while (!stopped) {
      try {
        const received = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: job.batchSize,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ["All"],
          }),
        );
        // The local queue may return one message twice in a long poll: a message id is handled once per batch.
        const messages = [...new Map((received.Messages ?? []).map((message) => [message.MessageId, message])).values()];
        if (messages.length === 0 || stopped) continue;
        const event: SQSEvent = {
          Records: messages.map((message) => ({
            messageId: message.MessageId as string,
            receiptHandle: message.ReceiptHandle as string,
            body: message.Body ?? "",
            attributes: (message.Attributes ?? {}) as unknown as SQSEvent["Records"][number]["attributes"],
            messageAttributes: {},
            md5OfBody: message.MD5OfBody ?? "",
            eventSource: "aws:sqs",
            eventSourceARN: queueArn,
            awsRegion: process.env.AWS_REGION ?? "us-east-1",
          })),
        };
        let failedIds: Set<string>;
        try {
          const response = await invokeHandler(await loadWorker(), event, jobContext(job.name, job.timeoutSeconds));
          failedIds = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
        } catch (error) {
          // A worker stopped with the poller leaves its messages to become visible again: not an error.
          if (!stopped) onError(error);
          failedIds = new Set(messages.map((message) => message.MessageId as string));
        }
        const done = messages.filter((message) => !failedIds.has(message.MessageId as string));
        if (done.length > 0) {
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: queueUrl,
              Entries: done.map((message, i) => ({ Id: String(i), ReceiptHandle: message.ReceiptHandle as string })),
            }),
          );
        }
      } catch (error) {
        if (!stopped) onError(error);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }
  return {
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}
