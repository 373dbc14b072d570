import { parseArgs } from "node:util";
import { CloudFormationClient, DescribeStacksCommand } from "@aws-sdk/client-cloudformation";
import { DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand } from "@aws-sdk/client-dynamodb-streams";
import { InvokeCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient, StartMessageMoveTaskCommand } from "@aws-sdk/client-sqs";
import { type ReplayAws, type ReplaySource, replay, replaySources, type StreamRecord } from "#local/replay";

/** `npm run replay -- --aws <source> [--stack <name>] [--drop-expired]` (local/replay.ts). */
const usage = [
  `usage: npm run replay -- --aws <${Object.keys(replaySources).join("|")}> [--stack FieldOperations] [--drop-expired]`,
  "  run-dlq, import-dlq, webhook-dlq  redrive the dead-letter queue (an SQS message move task)",
  "  publisher-failures               republish the stream batches the webhook publisher gave up on (records still in the 24 h stream)",
  "  --drop-expired                   delete failure messages whose records the stream no longer holds",
].join("\n");

function fail(message: string): never {
  process.stderr.write(`npm run replay: ${message}\n${usage}\n`);
  process.exit(2);
}

let parsed: { values: { aws?: boolean; stack?: string; "drop-expired"?: boolean; help?: boolean }; positionals: string[] };
try {
  parsed = parseArgs({
    options: {
      aws: { type: "boolean", default: false },
      stack: { type: "string" },
      "drop-expired": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    allowPositionals: true,
  });
} catch (error) {
  fail((error as Error).message);
}
if (parsed.values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
const source = parsed.positionals[0];
if (!source || !(source in replaySources)) fail(`unknown source ${String(source)}`);
if (!parsed.values.aws) fail("replay acts on a deployed stack: pass --aws (locally, `npm start` redrives nothing: restart it)");

const sqs = new SQSClient({});
const streams = new DynamoDBStreamsClient({});
const lambda = new LambdaClient({});
const cloudFormation = new CloudFormationClient({});
const aws: ReplayAws = {
  stackOutputs: async (stackName) => {
    const stack = (await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
    return Object.fromEntries((stack?.Outputs ?? []).map((output) => [output.OutputKey ?? "", output.OutputValue ?? ""]));
  },
  startMessageMove: async (sourceArn, destinationArn) =>
    (
      await sqs.send(
        new StartMessageMoveTaskCommand({ SourceArn: sourceArn, ...(destinationArn ? { DestinationArn: destinationArn } : {}) }),
      )
    ).TaskHandle ?? "",
  receive: async (queueUrl) =>
    (
      (
        await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 120 }),
        )
      ).Messages ?? []
    ).map((message) => ({ receiptHandle: message.ReceiptHandle ?? "", body: message.Body ?? "" })),
  deleteMessage: async (queueUrl, receiptHandle) => {
    await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle }));
  },
  streamRecords: async (streamArn, shardId, start, end) => {
    let iterator: string | undefined;
    try {
      iterator = (
        await streams.send(
          new GetShardIteratorCommand({
            StreamArn: streamArn,
            ShardId: shardId,
            ShardIteratorType: "AT_SEQUENCE_NUMBER",
            SequenceNumber: start,
          }),
        )
      ).ShardIterator;
    } catch (error) {
      // Older than the stream's retention (or the shard is gone): nothing left to read.
      if (["TrimmedDataAccessException", "ResourceNotFoundException"].includes((error as Error).name)) return [];
      throw error;
    }
    const records: StreamRecord[] = [];
    for (let emptyReads = 0; iterator && emptyReads < 5; ) {
      const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
      iterator = page.NextShardIterator;
      if (!page.Records?.length) {
        emptyReads += 1;
        continue;
      }
      for (const record of page.Records) {
        if (BigInt(record.dynamodb?.SequenceNumber ?? "0") > BigInt(end)) return records;
        // The Lambda event carries the creation time in epoch seconds; the SDK reads it as a Date.
        const created = record.dynamodb?.ApproximateCreationDateTime;
        records.push({
          ...record,
          dynamodb: { ...record.dynamodb, ...(created ? { ApproximateCreationDateTime: created.getTime() / 1000 } : {}) },
        } as StreamRecord);
      }
    }
    return records;
  },
  invoke: async (functionName, payload) => {
    const result = await lambda.send(
      new InvokeCommand({ FunctionName: functionName, Payload: new TextEncoder().encode(JSON.stringify(payload)) }),
    );
    return result.FunctionError ? { functionError: result.FunctionError } : {};
  },
};

const report = await replay(
  source as ReplaySource,
  { stackName: parsed.values.stack ?? process.env.STACK_NAME ?? "FieldOperations", dropExpired: parsed.values["drop-expired"] ?? false },
  aws,
);
process.stdout.write(`${report.messages.join("\n")}\n`);
if (report.source === "publisher-failures")
  process.stdout.write(
    `republished ${report.republished} batch(es), ${report.records} record(s); expired ${report.expired}; failed ${report.failed}\n`,
  );
process.exit((report.failed ?? 0) > 0 || ((report.expired ?? 0) > 0 && !parsed.values["drop-expired"]) ? 1 : 0);
