import { SQSClient } from "@aws-sdk/client-sqs";

/** Module-scope SQS client; endpoint from `AWS_ENDPOINT_URL(_SQS)`. */
let client: SQSClient | undefined;

export function sqsClient(): SQSClient {
  client ??= new SQSClient({});
  return client;
}
