import { afterEach, describe, expect, it, vi } from "vitest";
import { ServiceUnavailableError } from "#shared/domain/errors";
import { errorToHttpResult } from "#shared/http/error-response";
import { backoffDelayMs, contentionOf, retryContention } from "#shared/store/contention-retry";
import { retryBudgetMs, withInvocationDeadline } from "#shared/store/retry-budget";

const named = (name: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(name), { name, ...extra });
const cancelled = (...codes: string[]) => named("TransactionCanceledException", { CancellationReasons: codes.map((Code) => ({ Code })) });

describe("what counts as contention", () => {
  it.each([
    [named("TransactionConflictException"), "conflict"],
    [cancelled("TransactionConflict", "None"), "conflict"],
    [cancelled("ConditionalCheckFailed", "TransactionConflict"), "conflict"],
    [cancelled("None", "ThrottlingError"), "throttle"],
    [named("ProvisionedThroughputExceededException"), "throttle"],
    [named("ThrottlingException"), "throttle"],
    [named("RequestLimitExceeded"), "throttle"],
    [named("InternalServerError"), "unavailable"],
    [named("TimeoutError"), "unavailable"],
    [Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }), "unavailable"],
  ])("%s is %s", (error, contention) => {
    expect(contentionOf(error)).toBe(contention);
  });

  it.each([
    [cancelled("ConditionalCheckFailed", "None")],
    [cancelled("ValidationError", "TransactionConflict")],
    [named("ConditionalCheckFailedException")],
    [named("ValidationException", { $metadata: { httpStatusCode: 400 } })],
    ["not an error"],
  ])("%s is a real answer, not retried", (error) => {
    expect(contentionOf(error)).toBeUndefined();
  });
});

describe("backoff", () => {
  it("draws below min(cap, base · 2^attempt) (full jitter)", () => {
    const policy = { baseMs: 10, capMs: 100 };
    expect(backoffDelayMs(0, policy, () => 0.999)).toBe(9);
    expect(backoffDelayMs(3, policy, () => 0.999)).toBe(79);
    expect(backoffDelayMs(10, policy, () => 0.999)).toBe(99);
    expect(backoffDelayMs(10, policy, () => 0)).toBe(0);
  });
});

describe("the retry budget", () => {
  it("follows the Lambda context's remaining time, less a reserve for answering, capped", async () => {
    await withInvocationDeadline({ getRemainingTimeInMillis: () => 2_000 }, async () => expect(retryBudgetMs(8_000)).toBe(500));
    await withInvocationDeadline({ getRemainingTimeInMillis: () => 29_000 }, async () => expect(retryBudgetMs(8_000)).toBe(8_000));
    await withInvocationDeadline({ getRemainingTimeInMillis: () => 100 }, async () => expect(retryBudgetMs(8_000)).toBe(0));
    expect(retryBudgetMs(3_000)).toBe(3_000);
  });

  it("retries contention until it clears", async () => {
    let calls = 0;
    const result = await retryContention(
      async () => {
        calls += 1;
        if (calls < 4) throw cancelled("TransactionConflict", "None");
        return "written";
      },
      { baseMs: 1, capMs: 2 },
    );
    expect(result).toBe("written");
    expect(calls).toBe(4);
  });

  it("a real answer is not retried", async () => {
    let calls = 0;
    const failure = cancelled("ConditionalCheckFailed", "None");
    await expect(
      retryContention(async () => {
        calls += 1;
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(calls).toBe(1);
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("once the budget is spent: 503 sys-503 with Retry-After, never a 409", async () => {
    // An injected clock (vitest's fake timers drive Date.now and the backoff's setTimeout): 1,700 ms
    // left leaves a 200 ms budget after the answer reserve; the retries stop within it.
    vi.useFakeTimers();
    const startedAt = Date.now();
    let attempts = 0;
    const settled = withInvocationDeadline({ getRemainingTimeInMillis: () => 1_700 - (Date.now() - startedAt) }, () =>
      retryContention(
        async () => {
          attempts += 1;
          throw named("ThrottlingException");
        },
        { baseMs: 5, capMs: 20 },
      ).catch((thrown: unknown) => thrown),
    );
    await vi.runAllTimersAsync();
    const error = await settled;
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(attempts).toBeGreaterThan(1);
    expect(Date.now() - startedAt).toBeLessThanOrEqual(200);
    const answer = errorToHttpResult(error);
    expect(answer.statusCode).toBe(503);
    expect(answer.headers?.["retry-after"]).toBe("1");
    expect(answer.body).toMatchObject({ status: false, failedCode: "sys-503" });
  });
});
