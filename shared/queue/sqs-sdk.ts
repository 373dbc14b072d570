import type { SQSClient } from "@aws-sdk/client-sqs";

/**
 * The SQS SDK for request paths (on-demand runs, imports), loaded on the first send rather than at
 * module load, like #shared/blob/s3-sdk. The client is the one of #shared/queue/sqs (the jobs import that module directly).
 */
export async function sqsSdk(): Promise<{ client: SQSClient; sdk: typeof import("@aws-sdk/client-sqs") }> {
  const [{ sqsClient }, sdk] = await Promise.all([import("#shared/queue/sqs"), import("@aws-sdk/client-sqs")]);
  return { client: sqsClient(), sdk };
}
