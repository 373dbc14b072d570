import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, TransactWriteCommand, type TransactWriteCommandInput } from "@aws-sdk/lib-dynamodb";
import { appConfig } from "#shared/config/env";
import { contentionExhausted, installContentionRetry } from "#shared/store/contention-retry";

/**
 * Module-scope document client, created on first use and reused by every invocation of the
 * warm Lambda. The endpoint comes from the SDK's standard variables (`AWS_ENDPOINT_URL`,
 * `AWS_ENDPOINT_URL_DYNAMODB`), so the same code reaches AWS, LocalStack or DynamoDB Local.
 * Its one retry layer is contention-retry.ts (budgeted, ending in 503); the SDK's own retries are
 * off so throttles are not retried twice over.
 */
let client: DynamoDBDocumentClient | undefined;

export function documentClient(): DynamoDBDocumentClient {
  if (!client) {
    const base = new DynamoDBClient({ maxAttempts: 1 });
    installContentionRetry(base);
    client = DynamoDBDocumentClient.from(base, {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    });
  }
  return client;
}

export function tableName(): string {
  return appConfig().TABLE_NAME;
}

/** Conditional-write failures are recognised by the exception's name, never by message text. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return error instanceof Error && error.name === "ConditionalCheckFailedException";
}

/** Awaits a conditional write: true when it was written, false when its condition failed; other errors are thrown. */
export async function conditionally(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}

/**
 * For a cancelled `TransactWriteItems`, the reason code of each item in request order
 * (`None` for items that were fine, `ConditionalCheckFailed` for the guard that tripped). Returns
 * undefined when the error is not a transaction cancellation.
 */
export function transactionCancellationCodes(error: unknown): string[] | undefined {
  if (!(error instanceof Error) || error.name !== "TransactionCanceledException") return undefined;
  const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? [];
  return reasons.map((reason) => reason.Code ?? "None");
}

/** One item of a `TransactWriteItems` request. */
export type TransactItem = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

/**
 * Runs one `TransactWriteItems` whose items each carry a label saying what a failed condition on
 * it means. Resolves to undefined when the transaction committed, or to the labels of the items
 * whose condition failed when DynamoDB cancelled it; any other error is thrown. Conflicting
 * transactions and throttles never reach here as a cancellation: the client's retry layer retries
 * them, then answers 503 (contention-retry.ts).
 */
export async function transactLabelled<Label>(items: ReadonlyArray<readonly [TransactItem, Label]>): Promise<Label[] | undefined> {
  try {
    await documentClient().send(new TransactWriteCommand({ TransactItems: items.map(([item]) => item) }));
    return undefined;
  } catch (error) {
    const codes = transactionCancellationCodes(error);
    // Only failed conditions are the caller's to explain; anything else (an invalid item) is not a
    // conflict and must not read as one, and contention is a 503, not a 409.
    if (!codes || codes.some((code) => !["None", "ConditionalCheckFailed", "TransactionConflict", "ThrottlingError"].includes(code))) throw error;
    if (!codes.includes("ConditionalCheckFailed")) throw contentionExhausted(codes.includes("ThrottlingError") ? "throttle" : "conflict");
    return items.flatMap(([, label], index) => (codes[index] === "ConditionalCheckFailed" ? [label] : []));
  }
}
