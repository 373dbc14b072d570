import * as z from "zod/mini";
import type { core } from "zod/mini";
import type { Caller } from "#shared/domain/caller";
import { errorBodySchema } from "#shared/domain/schemas";
import { parseWith } from "#shared/domain/validation";
import { type Visit, visitCreateSchema } from "#shared/domain/visits/schema";

/** Visits one `POST /visits/batch` call may carry. */
export const VISIT_BATCH_MAX = 100;
/** Visits created at once: enough to hide each create's round trips, few enough to stay far from a table's throttles. */
export const VISIT_BATCH_CONCURRENCY = 8;

/**
 * The batch body at the edge: only its envelope. Each item is a `POST /visit` body, validated on its
 * own (an invalid item is that item's 400, never the whole call's), so an item is any JSON value here.
 */
export const visitBatchSchema = z.strictObject({
  visits: z
    .array(
      z
        .unknown()
        .check(z.describe("A `POST /visit` body (see createVisit), validated and created on its own: an invalid item is that item's 400.")),
    )
    .check(z.minLength(1), z.maxLength(VISIT_BATCH_MAX)),
});
export type VisitBatch = z.infer<typeof visitBatchSchema>;

/**
 * The (status, failedCode) an item may answer: those `POST /visit`'s create answers from inside its
 * work (its own validation and domain rules, the hub lease, a lost write, a busy table, an
 * unexpected error). The gateway's, the authorizer's and the envelope's answers belong to the call.
 * test/unit/visits/visit-batch.test.ts checks they are all declared for createVisit.
 */
export const visitBatchItemFailures: Readonly<Record<number, readonly string[]>> = {
  400: ["sys-400"],
  409: ["sys-410"],
  500: ["sys-500"],
  503: ["sys-503"],
};

/** `data` of the 200: one result per item, in the items' order. */
export function visitBatchResultSchema<T extends core.$ZodType>(visit: T) {
  const failedCodes = [...new Set(Object.values(visitBatchItemFailures).flat())].sort() as [string, ...string[]];
  const statuses = Object.keys(visitBatchItemFailures).map(Number) as [number, ...number[]];
  return z.array(
    z.union([
      z.object({ index: z.int(), status: z.literal(201), data: visit }),
      z.object({
        index: z.int(),
        status: z.literal(statuses),
        error: z.extend(errorBodySchema, { failedCode: z.enum(failedCodes) }),
      }),
    ]),
  );
}

/** One item's outcome: the visit it created, or the error `POST /visit` would have answered for it. */
export type VisitBatchOutcome = { index: number; visit: Visit } | { index: number; error: unknown };

/**
 * Creates each item exactly as `POST /visit` does (`create` is the visit service's create: its
 * validation, hub lease, pair guards and transaction), `VISIT_BATCH_CONCURRENCY` at a time, and
 * answers one outcome per item in the items' order. Items are independent: one item's failure
 * neither stops nor undoes another's create.
 */
export async function createVisitBatch(
  create: (caller: Caller, input: z.infer<typeof visitCreateSchema>) => Promise<Visit>,
  caller: Caller,
  items: readonly unknown[],
  concurrency = VISIT_BATCH_CONCURRENCY,
): Promise<VisitBatchOutcome[]> {
  const outcomes: VisitBatchOutcome[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      try {
        outcomes[index] = { index, visit: await create(caller, parseWith(visitCreateSchema, items[index])) };
      } catch (error) {
        outcomes[index] = { index, error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, concurrency), items.length) }, lane));
  return outcomes;
}
