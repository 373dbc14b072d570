import { randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { resetAppConfig } from "#shared/config/env";
import { provisionTable } from "#local/provision";

/**
 * A table and a queue of this test file's own, on the emulators of globalSetup. Jobs that read
 * across organizations (the scheduler tick reads the whole due index) are tested against these, so
 * they neither see nor change the data of other test files running at the same time.
 */
export async function useIsolatedTableAndQueue(): Promise<{ tableName: string; queueUrl: string; sqs: SQSClient }> {
  const suffix = randomUUID().slice(0, 8);
  const tableName = `isolated-${suffix}`;
  await provisionTable(new DynamoDBClient({}), tableName);
  const sqs = new SQSClient({});
  const queue = await sqs.send(new CreateQueueCommand({ QueueName: `isolated-runs-${suffix}` }));
  process.env.TABLE_NAME = tableName;
  process.env.RUN_QUEUE_URL = queue.QueueUrl as string;
  // The tick's fan-out pages and the runs beyond a share too (the run worker reads every kind from any of them).
  process.env.DUE_PAGE_QUEUE_URL = queue.QueueUrl as string;
  process.env.RUN_SPILLOVER_QUEUE_URL = queue.QueueUrl as string;
  resetAppConfig();
  return { tableName, queueUrl: queue.QueueUrl as string, sqs };
}

/** Receives (and deletes) every message currently in the queue, each message once. */
export async function drainQueue(sqs: SQSClient, queueUrl: string): Promise<unknown[]> {
  const bodies = new Map<string, unknown>();
  for (;;) {
    const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    const messages = received.Messages ?? [];
    if (messages.length === 0) return [...bodies.values()];
    for (const message of messages) {
      bodies.set(message.MessageId as string, JSON.parse(message.Body as string));
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle as string }));
    }
  }
}
