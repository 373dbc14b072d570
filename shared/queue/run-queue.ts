import { SendMessageBatchCommand } from "@aws-sdk/client-sqs";
import { appConfig } from "#shared/config/env";
import type { DuePageMessage, RoutingRunMessage } from "#shared/domain/runs/messages";
import { sqsClient } from "#shared/queue/sqs";

/** Sends up to 10 run messages in one call; answers the ones SQS did not accept. */
export async function sendRunMessages(messages: RoutingRunMessage[]): Promise<RoutingRunMessage[]> {
  if (messages.length === 0) return [];
  if (messages.length > 10) throw new Error("SQS batches hold at most 10 messages");
  const output = await sqsClient().send(
    new SendMessageBatchCommand({
      QueueUrl: appConfig().RUN_QUEUE_URL,
      Entries: messages.map((message, index) => ({ Id: String(index), MessageBody: JSON.stringify(message) })),
    }),
  );
  return (output.Failed ?? []).map((failure) => messages[Number(failure.Id)] as RoutingRunMessage);
}

/** Sends up to 10 fan-out pages of the tick in one call, to their own queue; throws unless SQS took every one. */
export async function sendDuePages(pages: DuePageMessage[]): Promise<void> {
  if (pages.length === 0) return;
  if (pages.length > 10) throw new Error("SQS batches hold at most 10 messages");
  const output = await sqsClient().send(
    new SendMessageBatchCommand({
      QueueUrl: appConfig().DUE_PAGE_QUEUE_URL || appConfig().RUN_QUEUE_URL,
      Entries: pages.map((page, index) => ({ Id: String(index), MessageBody: JSON.stringify(page) })),
    }),
  );
  if ((output.Failed ?? []).length > 0) throw new Error(`SQS did not accept ${output.Failed?.length} due pages: ${output.Failed?.[0]?.Message ?? ""}`);
}
