import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, type TransactWriteCommandInput } from "@aws-sdk/lib-dynamodb";
import { appConfig } from "#shared/config/env";
import { installContentionRetry } from "#shared/store/contention-retry";

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
