import { AsyncLocalStorage } from "node:async_hooks";
import { appConfig } from "#shared/config/env";

/**
 * How long the current invocation may still spend retrying a write DynamoDB refused for contention
 * (a transaction conflict or a throttle). The handler wrappers (shared/http/handler.ts,
 * shared/observability/job-handler.ts) run each invocation inside `withInvocationDeadline`, so the
 * budget follows the Lambda context's remaining time wherever there is one.
 */
export interface InvocationClock {
  getRemainingTimeInMillis?: () => number;
}

const invocation = new AsyncLocalStorage<{ remainingMs: () => number }>();

/** Left for answering once the retries give up (mapping the error, writing logs and metrics). */
export const answerReserveMs = 1_500;
/** Outside any invocation (scripts, unit tests): only the cap applies. */
const unboundedRemainingMs = () => Number.POSITIVE_INFINITY;

export function withInvocationDeadline<T>(context: InvocationClock | undefined, run: () => Promise<T>): Promise<T> {
  const remaining = context?.getRemainingTimeInMillis;
  return invocation.run({ remainingMs: typeof remaining === "function" ? () => remaining.call(context) : unboundedRemainingMs }, run);
}

/**
 * The retry budget of a call starting now, in ms: min(cap, remaining time − reserve), never
 * negative. The cap (DYNAMODB_RETRY_BUDGET_MS, 8 s by default) keeps an API answer from waiting
 * longer than a client would, whatever the function's timeout.
 */
export function retryBudgetMs(cap: number = appConfig().DYNAMODB_RETRY_BUDGET_MS): number {
  const remaining = (invocation.getStore()?.remainingMs ?? unboundedRemainingMs)();
  return Math.max(0, Math.min(cap, remaining - answerReserveMs));
}
