import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { ServiceUnavailableError } from "#shared/domain/errors";
import { retryBudgetMs } from "#shared/store/retry-budget";

/**
 * The one retry layer of every DynamoDB call the stores make (the client's own SDK retries are
 * off, see dynamo.ts): contention is retried with jittered exponential backoff within the
 * invocation's budget (retry-budget.ts), then answered 503 `sys-503` with Retry-After — never
 * 409, which means a real conflict (uniqueness, version, state) the caller must resolve.
 *
 * Contention is what DynamoDB documents as safe to retry unchanged:
 * - a transaction cancelled with a `TransactionConflict` or `ThrottlingError` reason (and no
 *   reason other than those, `ConditionalCheckFailed` and `None`);
 * - `TransactionConflictException` on a single write (an ongoing transaction holds the item);
 * - throttling (`ProvisionedThroughputExceededException`, `ThrottlingException`,
 *   `RequestLimitExceeded`) and the service's transient 5xx answers.
 * - a connection that timed out or dropped before an answer (the SDK's own transient network
 *   errors: `TimeoutError`, `ECONNRESET`, `EPIPE`, `ETIMEDOUT`, ...), as the SDK's standard retry
 *   strategy retries them. Such a write may have been applied: a conditional write retried after it
 *   can then fail its condition, the same trade-off the SDK's default retries make.
 * BatchGetItem answers throttled keys as UnprocessedKeys; its callers read those again.
 */
export type Contention = "conflict" | "throttle" | "unavailable";

const throttleNames = new Set(["ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"]);
const unavailableNames = new Set(["InternalServerError", "ServiceUnavailable", "InternalFailure"]);
// @smithy/service-error-classification's transient and Node.js network error names and codes.
const transientNetworkNames = new Set(["TimeoutError", "RequestTimeout", "RequestTimeoutException"]);
const transientNetworkCodes = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND"]);

export function contentionOf(error: unknown): Contention | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error.name === "TransactionConflictException") return "conflict";
  if (throttleNames.has(error.name)) return "throttle";
  if (error.name === "TransactionCanceledException") {
    const codes = ((error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? []).map(
      (reason) => reason.Code ?? "None",
    );
    // Retrying is safe even with a ConditionalCheckFailed among them: each attempt is atomic and
    // evaluates every condition again, so a real failure comes back alone.
    if (!codes.every((code) => ["None", "ConditionalCheckFailed", "TransactionConflict", "ThrottlingError"].includes(code)))
      return undefined;
    if (codes.includes("TransactionConflict")) return "conflict";
    if (codes.includes("ThrottlingError")) return "throttle";
    return undefined;
  }
  if (transientNetworkNames.has(error.name) || transientNetworkCodes.has(String((error as { code?: unknown }).code))) return "unavailable";
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (unavailableNames.has(error.name) || (status !== undefined && status >= 500)) return "unavailable";
  return undefined;
}

export interface BackoffPolicy {
  /** First delay's ceiling, ms. */
  baseMs: number;
  /** Largest delay's ceiling, ms. */
  capMs: number;
}

export const defaultBackoff: BackoffPolicy = { baseMs: 15, capMs: 800 };

/** "Full jitter": a uniform draw below min(cap, base · 2^attempt). */
export function backoffDelayMs(attempt: number, policy: BackoffPolicy = defaultBackoff, random: () => number = Math.random): number {
  return Math.floor(random() * Math.min(policy.capMs, policy.baseMs * 2 ** attempt));
}

/** Seconds a client should wait before calling again, as the Retry-After of the 503. */
export const retryAfterSeconds = 1;

export function contentionExhausted(contention: Contention): ServiceUnavailableError {
  const what =
    contention === "throttle"
      ? "The service is busy"
      : contention === "conflict"
        ? "Other requests are changing the same data"
        : "The database is unavailable";
  return new ServiceUnavailableError(`${what}; nothing was changed. Retry after ${retryAfterSeconds} s.`, retryAfterSeconds);
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Runs `attempt` until it succeeds, fails for a reason that is not contention, or the budget is
 * spent (then a 503 ServiceUnavailableError).
 */
export async function retryContention<T>(attempt: () => Promise<T>, policy: BackoffPolicy = defaultBackoff): Promise<T> {
  const startedAt = Date.now();
  const budget = retryBudgetMs();
  for (let tries = 0; ; tries += 1) {
    try {
      return await attempt();
    } catch (error) {
      const contention = contentionOf(error);
      if (!contention) throw error;
      const delay = backoffDelayMs(tries, policy);
      if (Date.now() - startedAt + delay > budget) throw contentionExhausted(contention);
      await sleep(delay);
    }
  }
}

/**
 * Installs the retry layer on a client (every command sent through it, document client commands
 * included, as they are sent by the client underneath).
 */
export function installContentionRetry(client: DynamoDBClient | DynamoDBDocumentClient, policy: BackoffPolicy = defaultBackoff): void {
  client.middlewareStack.add((next) => (args) => retryContention(() => next(args), policy), {
    step: "initialize",
    name: "contentionRetry",
    priority: "high",
    override: true,
  });
}
