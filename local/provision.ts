import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, type S3Client } from "@aws-sdk/client-s3";
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import {
  duePageQueueDefinition,
  importQueueDefinition,
  runQueueDefinition,
  runSpilloverQueueDefinition,
  webhookQueueDefinition,
} from "#shared/queue/definitions";
import { tableDefinition } from "#shared/store/table-definition";

/**
 * Creates the table, bucket and queues on the local emulators from the same definitions the CDK
 * stack uses (shared/store/table-definition.ts, shared/queue/definitions.ts). Idempotent.
 */
export async function provisionTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    const described = await client.send(new DescribeTableCommand({ TableName: tableName }));
    // A table kept under .local/ from before the stream existed gets it now.
    if (!described.Table?.StreamSpecification?.StreamEnabled) {
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          StreamSpecification: { StreamEnabled: true, StreamViewType: tableDefinition.streamViewType },
        }),
      );
    }
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  const attributeNames = new Set<string>([tableDefinition.partitionKey, tableDefinition.sortKey]);
  for (const index of tableDefinition.globalSecondaryIndexes) {
    attributeNames.add(index.partitionKey);
    attributeNames.add(index.sortKey);
  }
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: "PAY_PER_REQUEST",
      StreamSpecification: { StreamEnabled: true, StreamViewType: tableDefinition.streamViewType },
      AttributeDefinitions: [...attributeNames].map((name) => ({ AttributeName: name, AttributeType: "S" })),
      KeySchema: [
        { AttributeName: tableDefinition.partitionKey, KeyType: "HASH" },
        { AttributeName: tableDefinition.sortKey, KeyType: "RANGE" },
      ],
      GlobalSecondaryIndexes: tableDefinition.globalSecondaryIndexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: "HASH" },
          { AttributeName: index.sortKey, KeyType: "RANGE" },
        ],
        Projection: { ProjectionType: "ALL" },
      })),
    }),
  );
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: tableDefinition.timeToLiveAttribute, Enabled: true },
    }),
  );
}

export async function provisionBucket(client: S3Client, bucketName: string): Promise<void> {
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucketName }));
  } catch (error) {
    const name = (error as Error).name;
    if (name !== "BucketAlreadyOwnedByYou" && name !== "BucketAlreadyExists") throw error;
  }
}

/** Returns the URLs of the run queue and its dead-letter queue, of the run spillover and due-page queues (same dead-letter queue), of the import queue, and of the webhook delivery queue and its dead-letter queue. */
export async function provisionQueues(client: SQSClient): Promise<{
  runQueueUrl: string;
  deadLetterQueueUrl: string;
  spilloverQueueUrl: string;
  duePageQueueUrl: string;
  importQueueUrl: string;
  webhookQueueUrl: string;
  webhookDeadLetterQueueUrl: string;
}> {
  const { queueUrl: importQueueUrl } = await provisionQueue(client, importQueueDefinition);
  const { queueUrl: runQueueUrl, deadLetterQueueUrl } = await provisionQueue(client, runQueueDefinition);
  const runDeadLetterQueue = {
    deadLetterQueueName: runQueueDefinition.deadLetterQueueName,
    deadLetterRetentionSeconds: runQueueDefinition.deadLetterRetentionSeconds,
  };
  const { queueUrl: spilloverQueueUrl } = await provisionQueue(client, { ...runSpilloverQueueDefinition, ...runDeadLetterQueue });
  const { queueUrl: duePageQueueUrl } = await provisionQueue(client, { ...duePageQueueDefinition, ...runDeadLetterQueue });
  const { queueUrl: webhookQueueUrl, deadLetterQueueUrl: webhookDeadLetterQueueUrl } = await provisionQueue(client, webhookQueueDefinition);
  return {
    runQueueUrl,
    deadLetterQueueUrl,
    spilloverQueueUrl,
    duePageQueueUrl,
    importQueueUrl,
    webhookQueueUrl,
    webhookDeadLetterQueueUrl,
  };
}

/** A queue of `definition` with its dead-letter queue and redrive policy. */
async function provisionQueue(
  client: SQSClient,
  definition: {
    queueName: string;
    deadLetterQueueName: string;
    deadLetterRetentionSeconds: number;
    visibilityTimeoutSeconds: number;
    messageRetentionSeconds: number;
    maxReceiveCount: number;
  },
): Promise<{ queueUrl: string; deadLetterQueueUrl: string }> {
  const dlq = await client.send(
    new CreateQueueCommand({
      QueueName: definition.deadLetterQueueName,
      Attributes: { MessageRetentionPeriod: String(definition.deadLetterRetentionSeconds) },
    }),
  );
  const deadLetterQueueUrl = dlq.QueueUrl as string;
  const dlqAttributes = await client.send(new GetQueueAttributesCommand({ QueueUrl: deadLetterQueueUrl, AttributeNames: ["QueueArn"] }));
  const queue = await client.send(
    new CreateQueueCommand({
      QueueName: definition.queueName,
      Attributes: {
        VisibilityTimeout: String(definition.visibilityTimeoutSeconds),
        MessageRetentionPeriod: String(definition.messageRetentionSeconds),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: dlqAttributes.Attributes?.QueueArn,
          maxReceiveCount: definition.maxReceiveCount,
        }),
      },
    }),
  );
  return { queueUrl: queue.QueueUrl as string, deadLetterQueueUrl };
}
