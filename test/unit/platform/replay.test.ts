import { describe, expect, it } from "vitest";
import { type ReplayAws, replay, type StreamRecord } from "#local/replay";

const outputs = {
  RunDeadLetterQueueArn: "arn:aws:sqs:eu-west-1:1:run-dlq",
  ImportDeadLetterQueueArn: "arn:aws:sqs:eu-west-1:1:import-dlq",
  ImportQueueArn: "arn:aws:sqs:eu-west-1:1:import",
  WebhookDeadLetterQueueArn: "arn:aws:sqs:eu-west-1:1:webhook-dlq",
  WebhookQueueArn: "arn:aws:sqs:eu-west-1:1:webhook",
  WebhookPublisherFailureQueueUrl: "https://sqs/publisher-failures",
  WebhookPublisherFunctionName: "FieldOperations-WebhookPublisher",
};
const record = (sequence: string, entity: string): StreamRecord => ({
  eventName: "MODIFY",
  dynamodb: { SequenceNumber: sequence, NewImage: { entity: { S: entity } } },
});
const failure = (start: string, end: string) =>
  JSON.stringify({
    DDBStreamBatchInfo: { shardId: "shard-1", startSequenceNumber: start, endSequenceNumber: end, streamArn: "arn:stream", batchSize: 2 },
  });

/** A stubbed account: a failure queue, a stream holding some sequence numbers, a publisher that may fail. */
function account(options: { queue: string[]; stream: StreamRecord[]; publisherFails?: boolean }) {
  const queue = options.queue.map((body, index) => ({ receiptHandle: `r${index}`, body }));
  const calls = { moves: [] as Array<[string, string | undefined]>, invoked: [] as unknown[], deleted: [] as string[] };
  const aws: ReplayAws = {
    stackOutputs: async () => outputs,
    startMessageMove: async (source, destination) => {
      calls.moves.push([source, destination]);
      return "task-1";
    },
    receive: async () => queue.filter((message) => !calls.deleted.includes(message.receiptHandle)),
    deleteMessage: async (_url, handle) => {
      calls.deleted.push(handle);
    },
    streamRecords: async (_arn, _shard, start, end) =>
      options.stream.filter((each) => {
        const sequence = BigInt(each.dynamodb?.SequenceNumber ?? "0");
        return sequence >= BigInt(start) && sequence <= BigInt(end);
      }),
    invoke: async (_name, payload) => {
      calls.invoked.push(payload);
      return options.publisherFails ? { functionError: "Unhandled" } : {};
    },
  };
  return { aws, calls };
}

describe("npm run replay -- --aws <source> (stubbed AWS)", () => {
  it("redrives each dead-letter queue: runs to their own source queues, imports and deliveries to their queue", async () => {
    const { aws, calls } = account({ queue: [], stream: [] });
    await replay("run-dlq", { stackName: "FieldOperations" }, aws);
    await replay("import-dlq", { stackName: "FieldOperations" }, aws);
    const report = await replay("webhook-dlq", { stackName: "FieldOperations" }, aws);
    expect(calls.moves).toEqual([
      [outputs.RunDeadLetterQueueArn, undefined],
      [outputs.ImportDeadLetterQueueArn, outputs.ImportQueueArn],
      [outputs.WebhookDeadLetterQueueArn, outputs.WebhookQueueArn],
    ]);
    expect(report.moveTask).toBe("task-1");
  });

  it("republishes a failed stream batch's event records to the publisher, then deletes its failure message", async () => {
    const { aws, calls } = account({
      queue: [failure("100", "300")],
      stream: [record("100", "routingResult"), record("200", "vehicle"), record("300", "dataType"), record("400", "runClaim")],
    });
    const report = await replay("publisher-failures", { stackName: "FieldOperations" }, aws);
    // Only the range, and only items the mapping's filter lets through.
    expect(calls.invoked).toEqual([{ Records: [record("100", "routingResult"), record("300", "dataType")] }]);
    expect(calls.deleted).toEqual(["r0"]);
    expect(report).toMatchObject({ republished: 1, records: 2, expired: 0, failed: 0 });
  });

  it("keeps a failure whose records the stream no longer holds (unless told to drop it), and one the publisher fails again", async () => {
    const expired = account({ queue: [failure("1", "2")], stream: [] });
    const kept = await replay("publisher-failures", { stackName: "FieldOperations" }, expired.aws);
    expect(kept).toMatchObject({ expired: 1, republished: 0 });
    expect(kept.messages[0]).toMatch(/no longer holds.*kept/);
    expect(expired.calls.deleted).toEqual([]);
    const dropped = await replay("publisher-failures", { stackName: "FieldOperations", dropExpired: true }, expired.aws);
    expect(dropped.expired).toBe(1);
    expect(expired.calls.deleted).toEqual(["r0"]);
    const failing = account({ queue: [failure("1", "2")], stream: [record("1", "runClaim")], publisherFails: true });
    const again = await replay("publisher-failures", { stackName: "FieldOperations" }, failing.aws);
    expect(again).toMatchObject({ failed: 1, republished: 0 });
    expect(failing.calls.deleted).toEqual([]);
  });

  it("names the missing output when the stack predates it", async () => {
    const { aws } = account({ queue: [], stream: [] });
    await expect(replay("run-dlq", { stackName: "Old" }, { ...aws, stackOutputs: async () => ({}) })).rejects.toThrow(
      /no output RunDeadLetterQueueArn/,
    );
  });
});
