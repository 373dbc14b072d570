import { createHash } from "node:crypto";
import { IdempotencyConfig, makeIdempotent } from "@aws-lambda-powertools/idempotency";
import type { APIGatewayProxyResult, Context } from "aws-lambda";
import type { Caller } from "#shared/domain/caller";
import { ConflictError, UnprocessableContentError } from "#shared/domain/errors";
import { IDEMPOTENCY_REPLAYED_HEADER } from "#shared/http/idempotency-key";
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
 * - the fingerprint covers the caller too (user, hubs, permissions, hidden fields: callerFingerprint),
 *   so another caller reusing the key gets 422 idem-422 rather than an answer made for someone else;
 *   the route's permission is checked before (the handler's authorization middleware), and hub and
 *   hidden-field rules run inside the work, which a replay only skips for the very same caller;
 * - only successes are kept: a refused call (any 4xx or 5xx) deletes its record, so it never
 *   poisons the key for a caller who may do what it was refused;
 * - answers that carry a secret are stored without it (`secretFree`: the route strips the secret
 *   before the answer is stored and puts a fresh one back on replay), never in clear.
 */
export { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_REPLAYED_HEADER, parseIdempotencyKey } from "#shared/http/idempotency-key";
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;

/**
 * Who asked, as far as it shapes the answer: the same request by another user, or by the same
 * user with other hubs, permissions or hidden fields, is another request. Lists are sorted so the
 * order claims arrive in does not matter.
 */
export function callerFingerprint(caller: Caller): unknown {
  const sorted = (values: Iterable<string>) => [...new Set(values)].sort();
  return {
    userId: caller.userId,
    hubIds: sorted(caller.hubIds),
    permissions: sorted(caller.permissions),
    hiddenFields: sorted(
      caller.permissionDetails
        .filter((detail) => (detail.hiddenFields?.length ?? 0) > 0)
        .map((detail) => JSON.stringify([detail.permissionName, detail.dataTypeId ?? null, sorted(detail.hiddenFields ?? [])])),
    ),
  };
}

/** How a route whose answer carries a secret keeps it out of the stored answer. */
export interface SecretFreeAnswer {
  /** The answer body as stored: without the secret. */
  strip(body: unknown): unknown;
  /** The stored body with a fresh secret put back, answered on replay. */
  restore(body: unknown): Promise<unknown>;
}

/**
 * What the payload hash covers: the validated request, with file bytes (multipart) replaced by
 * their SHA-256, so the hash stays small and a re-sent form with a new boundary is the same request.
 */
export function requestFingerprint(value: unknown): unknown {
  if (value instanceof Uint8Array) return { sha256: createHash("sha256").update(value).digest("hex") };
  if (Array.isArray(value)) return value.map(requestFingerprint);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).flatMap(([name, item]) => (item === undefined ? [] : [[name, requestFingerprint(item)]])),
    );
  }
  return value;
}

interface IdempotentRequest {
  key: string;
  fingerprint: unknown;
}

/** Runs `answer` once per (organization, operation, key): later calls by the same caller with the same request get the stored answer back. */
export async function answerIdempotently(
  options: {
    organizationId: string;
    operationId: string;
    key: string | undefined;
    caller: Caller;
    request: unknown;
    context: Context;
    secretFree?: SecretFreeAnswer;
    /** The route's window when it keeps answers longer than IDEMPOTENCY_WINDOW_SECONDS. */
    windowSeconds?: number;
  },
  answer: () => Promise<APIGatewayProxyResult>,
): Promise<APIGatewayProxyResult> {
  if (options.key === undefined) return answer();
  const config = new IdempotencyConfig({
    eventKeyJmesPath: "key",
    payloadValidationJmesPath: "fingerprint",
    throwOnNoIdempotencyKey: true,
    expiresAfterSeconds: options.windowSeconds ?? IDEMPOTENCY_WINDOW_SECONDS,
    hashFunction: "sha256",
    responseHook: (response) => ({ ...(response as object), replayed: true }) as never,
  });
  config.registerLambdaContext(options.context);
  // The live answer of this invocation, when it ran the work: the stored copy may lack its secret.
  let live: APIGatewayProxyResult | undefined;
  const once = makeIdempotent(
    async (_request: IdempotentRequest): Promise<StoredAnswer & { replayed?: boolean }> => {
      // An error (a refused call included) propagates: Powertools deletes the record, nothing is kept.
      live = await answer();
      const secretFree = options.secretFree;
      return packAnswer(secretFree ? { ...live, body: JSON.stringify(secretFree.strip(JSON.parse(live.body))) } : live);
    },
    { persistenceStore: idempotencyPersistence(options.organizationId), config, keyPrefix: options.operationId },
  );
  let stored: StoredAnswer & { replayed?: boolean };
  try {
    stored = await once({
      key: options.key,
      fingerprint: requestFingerprint({ caller: callerFingerprint(options.caller), request: options.request }),
    });
  } catch (error) {
    throw idempotencyError(error);
  }
  if (!stored.replayed && live) return live;
  const result = unpackAnswer(stored);
  if (options.secretFree) result.body = JSON.stringify(await options.secretFree.restore(JSON.parse(result.body)));
  result.headers[IDEMPOTENCY_REPLAYED_HEADER.toLowerCase()] = "true";
  return result;
}

function idempotencyError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  if (error.name === "IdempotencyAlreadyInProgressError") {
    return new ConflictError("A request with this Idempotency-Key is still being processed; retry once it has finished.", "idem-409");
  }
  if (error.name === "IdempotencyValidationError") {
    return new UnprocessableContentError(
      "This Idempotency-Key was already used with a different request; use a new key for a new request.",
      "idem-422",
    );
  }
  return error;
}
