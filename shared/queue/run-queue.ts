import { SendMessageBatchCommand } from "@aws-sdk/client-sqs";
import { appConfig } from "#shared/config/env";
import type { DuePageMessage, RoutingRunMessage } from "#shared/domain/runs/messages";
import { sqsClient } from "#shared/queue/sqs";

/**
 * Sends up to 10 run messages, one call per queue: those in `spilled` to the spillover queue, the
 * others to the run queue (shared/app/run-spillover.ts); answers the ones SQS did not accept.
 */
export async function sendRunMessages(
  messages: RoutingRunMessage[],
  spilled: ReadonlySet<RoutingRunMessage> = new Set(),
): Promise<RoutingRunMessage[]> {
  if (messages.length > 10) throw new Error("SQS batches hold at most 10 messages");
  const groups = [
    { queueUrl: appConfig().RUN_QUEUE_URL, batch: messages.filter((message) => !spilled.has(message)) },
    { queueUrl: appConfig().RUN_SPILLOVER_QUEUE_URL, batch: messages.filter((message) => spilled.has(message)) },
  ].filter((group) => group.batch.length > 0);
  // Settled, not all: when one queue's call fails the other's messages may already be queued, and
  // answering them as unsent would make the caller release runs that will still be worked.
  const outcomes = await Promise.allSettled(
    groups.map(async ({ queueUrl, batch }) => {
      const output = await sqsClient().send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((message, index) => ({ Id: String(index), MessageBody: JSON.stringify(message) })),
        }),
      );
      return (output.Failed ?? []).map((failure) => batch[Number(failure.Id)] as RoutingRunMessage);
    }),
  );
  if (outcomes.every((outcome) => outcome.status === "rejected")) throw (outcomes[0] as PromiseRejectedResult).reason;
  return outcomes.flatMap((outcome, index) =>
    outcome.status === "fulfilled" ? outcome.value : (groups[index] as (typeof groups)[number]).batch,
  );
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
  if ((output.Failed ?? []).length > 0)
    throw new Error(`SQS did not accept ${output.Failed?.length} due pages: ${output.Failed?.[0]?.Message ?? ""}`);
}
