import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { appConfig } from "#shared/config/env";
import type { ImportQueue } from "#shared/domain/data-types/import-service";
import { sqsClient } from "#shared/queue/sqs";

/** The legacy-import queue: one message per import step. */
export const sqsImportQueue: ImportQueue = {
  async send(message) {
    await sqsClient().send(new SendMessageCommand({ QueueUrl: appConfig().IMPORT_QUEUE_URL, MessageBody: JSON.stringify(message) }));
  },
};
