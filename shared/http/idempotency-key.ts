import { ValidationError } from "#shared/domain/errors";

/**
 * The `Idempotency-Key` header, read by every route flagged `idempotent` before validation ends.
 * Apart from shared/http/idempotency.ts (Powertools' idempotency utility and its persistence), so
 * the shared handler reads the header without bundling that utility into every function: only the
 * handlers of idempotent routes pass `answerIdempotently` (see HttpHandlerOptions).
 */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
export const IDEMPOTENCY_REPLAYED_HEADER = "Idempotency-Replayed";

/** Printable ASCII without spaces, 1–255 characters (a UUID v4 is the usual choice). */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export function parseIdempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!KEY_PATTERN.test(value)) {
    throw ValidationError.single(
      IDEMPOTENCY_KEY_HEADER,
      "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces",
      "idem-400",
    );
  }
  return value;
}
