import { ServiceUnavailableError } from "#shared/domain/errors";
import type { CapacityRecorder } from "#shared/store/record-search";

/** Read units per operation, as the record store's recorder reports them (ReturnConsumedCapacity: TOTAL). */
export function capacityMeter() {
  const used = { Query: 0, BatchGetItem: 0 };
  const recorder: CapacityRecorder = (operation, units) => {
    used[operation] += units;
  };
  return { used, recorder, total: () => used.Query + used.BatchGetItem };
}

/**
 * Runs `run(0 … count-1)`, `size` at a time, each retried on a 503: DynamoDB Local reports transaction
 * conflicts among concurrent writes of unrelated items (the token writes beside the record
 * transactions), which production would not meet.
 */
export async function loadInBatches(count: number, size: number, run: (index: number) => Promise<unknown>): Promise<void> {
  const withRetries = async (index: number) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run(index);
      } catch (error) {
        if (!(error instanceof ServiceUnavailableError) || attempt >= 5) throw error;
      }
    }
  };
  for (let start = 0; start < count; start += size)
    await Promise.all(Array.from({ length: Math.min(size, count - start) }, (_, offset) => withRetries(start + offset)));
}
