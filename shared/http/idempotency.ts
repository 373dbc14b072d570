import { createHash } from "node:crypto";
import { IdempotencyConfig, makeIdempotent } from "@aws-lambda-powertools/idempotency";
import type { APIGatewayProxyResult, Context } from "aws-lambda";
import { AppError, ConflictError, UnprocessableContentError } from "#shared/domain/errors";
import { IDEMPOTENCY_REPLAYED_HEADER } from "#shared/http/idempotency-key";
import { errorToHttpResult } from "#shared/http/error-response";
import { toProxyResult } from "#shared/http/responses";
import { idempotencyPersistence, packAnswer, type StoredAnswer, unpackAnswer } from "#shared/store/idempotency-store";

/**
 * Stripe-style idempotency keys for the routes flagged `idempotent` (creates, dispatch, on-demand
 * runs), on Powertools' `makeIdempotent` around the work of the request:
 * - the record is keyed by organization (its partition), operationId (key prefix) and the
 *   `Idempotency-Key` header; the payload hash covers path, query and body as validated;
 * - same key, same request within 24 h → the first answer again (status, body, the route's
 *   headers) plus `Idempotency-Replayed: true`, and the work is not done again;
 * - same key, different request → 422 idem-422; same key while the first is still running → 409 idem-409;
 * - a malformed key → 400 idem-400.
 * Successes and deterministic client errors (400, 403, 404, 422 from the domain) are kept; 409,
 * 412, 429 and 5xx are not (the record is deleted), so a retry with the same key may succeed later.
 */
export { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_REPLAYED_HEADER, parseIdempotencyKey } from "#shared/http/idempotency-key";
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;

/** Client errors whose answer would be the same on a retry, so they are replayed rather than redone. */
const KEPT_CLIENT_ERRORS = new Set([400, 403, 404, 422]);

/**
 * What the payload hash covers: the validated request, with file bytes (multipart) replaced by
 * their SHA-256, so the hash stays small and a re-sent form with a new boundary is the same request.
 */
export function requestFingerprint(value: unknown): unknown {
  if (value instanceof Uint8Array) return { sha256: createHash("sha256").update(value).digest("hex") };
  if (Array.isArray(value)) return value.map(requestFingerprint);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).flatMap(([name, item]) => (item === undefined ? [] : [[name, requestFingerprint(item)]])));
  }
  return value;
}

interface IdempotentRequest {
  key: string;
  fingerprint: unknown;
}

/** Runs `answer` once per (organization, operation, key): later calls get the stored answer back. */
export async function answerIdempotently(
  options: { organizationId: string; operationId: string; key: string | undefined; request: unknown; context: Context },
  answer: () => Promise<APIGatewayProxyResult>,
): Promise<APIGatewayProxyResult> {
  if (options.key === undefined) return answer();
  const config = new IdempotencyConfig({
    eventKeyJmesPath: "key",
    payloadValidationJmesPath: "fingerprint",
    throwOnNoIdempotencyKey: true,
    expiresAfterSeconds: IDEMPOTENCY_WINDOW_SECONDS,
    hashFunction: "sha256",
    responseHook: (response) => ({ ...(response as object), replayed: true }) as never,
  });
  config.registerLambdaContext(options.context);
  const once = makeIdempotent(
    async (_request: IdempotentRequest): Promise<StoredAnswer & { replayed?: boolean }> => {
      try {
        return packAnswer(await answer());
      } catch (error) {
        if (!(error instanceof AppError) || !KEPT_CLIENT_ERRORS.has(error.statusCode)) throw error;
        const result = toProxyResult(errorToHttpResult(error));
        return packAnswer(result);
      }
    },
    { persistenceStore: idempotencyPersistence(options.organizationId), config, keyPrefix: options.operationId },
  );
  let stored: StoredAnswer & { replayed?: boolean };
  try {
    stored = await once({ key: options.key, fingerprint: requestFingerprint(options.request) });
  } catch (error) {
    throw idempotencyError(error);
  }
  const result = unpackAnswer(stored);
  if (stored.replayed) result.headers[IDEMPOTENCY_REPLAYED_HEADER.toLowerCase()] = "true";
  return result;
}

function idempotencyError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  if (error.name === "IdempotencyAlreadyInProgressError") {
    return new ConflictError("A request with this Idempotency-Key is still being processed; retry once it has finished.", "idem-409");
  }
  if (error.name === "IdempotencyValidationError") {
    return new UnprocessableContentError("This Idempotency-Key was already used with a different request; use a new key for a new request.", "idem-422");
  }
  return error;
}
