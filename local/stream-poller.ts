import { DescribeTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record,
} from "@aws-sdk/client-dynamodb-streams";
import type { DynamoDBStreamEvent } from "aws-lambda";
import type { LocalScheduler } from "#local/scheduler";
import { type FilterPattern, matchesFilterPattern } from "#local/stream-filter";

type StreamHandler = (event: DynamoDBStreamEvent) => Promise<unknown>;

/**
 * What the Lambda event source mapping does on AWS, against DynamoDB Local's stream: every shard
 * read from its oldest record (TRIM_HORIZON: a restarted `npm start` replays what is still in the
 * stream, so an event written while the publisher was down is not lost; replays repeat the same
 * event ids), records handed to the publisher in order, a batch that fails handed again from
 * the same position (the iterator does not move on), closed shards dropped, new ones found.
 */
export function startStreamPoller(
  options: { endpoint: string; region: string; credentials: { accessKeyId: string; secretAccessKey: string }; tableName: string },
  loadHandler: () => Promise<StreamHandler>,
  onError: (error: unknown) => void,
  /** Lambda's `FilterCriteria` of the event source (local/stream-filter.ts): only matching records reach the handler. */
  filter: FilterPattern | undefined,
  intervalMs = 250,
): LocalScheduler {
  const dynamo = new DynamoDBClient({ region: options.region, credentials: options.credentials, endpoint: options.endpoint });
  const streams = new DynamoDBStreamsClient({ region: options.region, credentials: options.credentials, endpoint: options.endpoint });
  const iterators = new Map<string, string>();
  const closed = new Set<string>();
  let stopped = false;
  let lastDescribe = 0;

  async function discoverShards(): Promise<void> {
    const table = await dynamo.send(new DescribeTableCommand({ TableName: options.tableName }));
    const streamArn = table.Table?.LatestStreamArn;
    if (!streamArn) return;
    const stream = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    for (const shard of stream.StreamDescription?.Shards ?? []) {
      const shardId = shard.ShardId as string;
      if (iterators.has(shardId) || closed.has(shardId)) continue;
      const iterator = await streams.send(
        new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: "TRIM_HORIZON" }),
      );
      if (iterator.ShardIterator) iterators.set(shardId, iterator.ShardIterator);
    }
  }

  const asLambdaRecord = (record: _Record): DynamoDBStreamEvent["Records"][number] =>
    ({
      eventID: record.eventID,
      eventName: record.eventName,
      eventSource: "aws:dynamodb",
      dynamodb: {
        ...record.dynamodb,
        ApproximateCreationDateTime: record.dynamodb?.ApproximateCreationDateTime
          ? record.dynamodb.ApproximateCreationDateTime.getTime() / 1000
          : undefined,
      },
    }) as DynamoDBStreamEvent["Records"][number];

  const loop = (async () => {
    while (!stopped) {
      try {
        if (Date.now() - lastDescribe > 2_000) {
          lastDescribe = Date.now();
          await discoverShards();
        }
        const handler = await loadHandler();
        for (const [shardId, iterator] of iterators) {
          const output = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 100 }));
          const records = (output.Records ?? []).map(asLambdaRecord).filter((record) => !filter || matchesFilterPattern(record, filter));
          if (records.length > 0) await handler({ Records: records });
          if (output.NextShardIterator) iterators.set(shardId, output.NextShardIterator);
          else {
            iterators.delete(shardId);
            closed.add(shardId);
          }
        }
      } catch (error) {
        if (!stopped) onError(error);
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();

  return {
    stop: async () => {
      stopped = true;
      await loop;
      dynamo.destroy();
      streams.destroy();
    },
  };
}
