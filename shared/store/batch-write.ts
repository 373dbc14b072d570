import { BatchWriteCommand } from "@aws-sdk/lib-dynamodb";
import { ServiceUnavailableError } from "#shared/domain/errors";
import { documentClient, tableName } from "#shared/store/dynamo";

/** BatchWriteItem's limit per request. */
const BATCH_WRITE_MAX = 25;
/** Requests per chunk before giving up on items DynamoDB left unprocessed (throttled). */
const UNPROCESSED_ATTEMPTS = 6;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Exponential backoff with jitter, as the SDK's own retries (AWS: "Error retries and exponential backoff"). */
const backoffMs = (attempt: number) => Math.min(1000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2);

/**
 * Puts items 25 per BatchWriteItem, asking again (with backoff) for the ones DynamoDB answers as
 * unprocessed. Unconditional: only for items whose key and attributes are derived from what they
 * record, so writing one twice stores the same item. Throws `busy` (503) when items stay unprocessed.
 */
export async function batchPut(items: readonly Record<string, unknown>[], busy: string): Promise<void> {
  for (let start = 0; start < items.length; start += BATCH_WRITE_MAX) {
    let pending: unknown[] = items.slice(start, start + BATCH_WRITE_MAX).map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= UNPROCESSED_ATTEMPTS) throw new ServiceUnavailableError(busy, 1);
      if (attempt > 0) await sleep(backoffMs(attempt));
      const output = await documentClient().send(new BatchWriteCommand({ RequestItems: { [tableName()]: pending as never } }));
      pending = output.UnprocessedItems?.[tableName()] ?? [];
    }
  }
}
