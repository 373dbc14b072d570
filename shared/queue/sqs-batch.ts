import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import type * as z from "zod/mini";
import { logger } from "#shared/observability/powertools";

/**
 * Thrown by a record handler to have SQS deliver the message again (it is reported as a partial
 * batch failure; after the queue's maxReceiveCount deliveries it moves to the dead-letter queue).
 */
export class RedeliverMessage extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "RedeliverMessage";
  }
}

/**
 * Runs `handleRecord` on each record of an SQS batch, one after the other (a routing run takes the
 * whole CPU; two at once would only slow both), with Powertools' batch processor reporting the records
 * whose handler threw as `batchItemFailures`. Even a batch whose every record failed is answered as
 * partial failures rather than as an invocation error: the result for SQS is the same (all are
 * redelivered), and the functions' error alarms stay for real faults.
 */
export async function processSqsBatch(event: SQSEvent, handleRecord: (record: SQSRecord) => Promise<void>): Promise<SQSBatchResponse> {
  // A processor per batch: it holds the batch's state, and the local runtime may run two batches at once.
  const processor = new BatchProcessor(EventType.SQS);
  return processPartialResponse(
    event,
    async (record: SQSRecord) => {
      logger.appendKeys({ messageId: record.messageId });
      await handleRecord(record);
    },
    processor,
    { processInParallel: false, throwOnFullBatchFailure: false },
  );
}

/** The message body parsed as JSON and validated by `schema`, or undefined when it is not such a message. */
export function parseMessageBody<Schema extends z.ZodMiniType>(record: SQSRecord, schema: Schema): z.output<Schema> | undefined {
  let body: unknown;
  try {
    body = JSON.parse(record.body);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(body);
  return parsed.success ? parsed.data : undefined;
}
