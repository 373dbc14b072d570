import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { appConfig } from "#shared/config/env";

/**
 * Module-scope document client, created on first use and reused by every invocation of the
 * warm Lambda. The endpoint comes from the SDK's standard variables (`AWS_ENDPOINT_URL`,
 * `AWS_ENDPOINT_URL_DYNAMODB`), so the same code reaches AWS, LocalStack or DynamoDB Local.
 */
let client: DynamoDBDocumentClient | undefined;

export function documentClient(): DynamoDBDocumentClient {
  client ??= DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  return client;
}

export function tableName(): string {
  return appConfig().TABLE_NAME;
}

/** Conditional-write failures are recognised by the exception's name, never by message text. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return error instanceof Error && error.name === "ConditionalCheckFailedException";
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
