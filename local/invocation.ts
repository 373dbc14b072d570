import { randomUUID } from "node:crypto";
import { InvokeStore, InvokeStoreBase } from "@aws/lambda-invoke-store";
import type { Context } from "aws-lambda";

/**
 * What the Lambda runtime does around each invocation, for the local runtime, which (like Lambda
 * Managed Instances) runs many invocations at once in one process: each runs in its own
 * InvokeStore scope (an AsyncLocalStorage), and `AWS_LAMBDA_MAX_CONCURRENCY` tells Powertools to
 * keep per-invocation state (log keys, Lambda context, metrics) there. Without it, a request and
 * a tick in flight together would share one logger's keys. Once the variable is set, Powertools
 * (2.35) keeps that state only in a scope: logging outside one throws "No context available" (the
 * store's `set` outside `run`), so whatever logs in this process runs through `invokeHandler`.
 */
let invokeStore: Promise<InvokeStoreBase> | undefined;

function concurrentInvokeStore(): Promise<InvokeStoreBase> {
  invokeStore ??= InvokeStore.getInstanceAsync(true).then((store) => {
    // Only once the store exists: Powertools refuses to log when the variable is set and no store is registered.
    process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= "64";
    return store;
  });
  return invokeStore;
}

/** Calls a handler as the Lambda runtime would: inside the invocation's own scope. */
export async function invokeHandler<TEvent, TResult>(
  handler: (event: TEvent, context: Context) => Promise<TResult>,
  event: TEvent,
  context: Context,
): Promise<TResult> {
  const store = await concurrentInvokeStore();
  return store.run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context.awsRequestId }, () => handler(event, context));
}

/** The Lambda context of a background job invoked locally (the gateway builds its own for routes). */
export function jobContext(functionName: string, timeoutSeconds: number): Context {
  const startedAt = Date.now();
  return {
    awsRequestId: randomUUID(),
    functionName,
    functionVersion: "$LATEST",
    memoryLimitInMB: "2048",
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => timeoutSeconds * 1000 - (Date.now() - startedAt),
  } as unknown as Context;
}
