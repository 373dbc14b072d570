import { appConfig } from "#shared/config/env";
import type { ImportQueue } from "#shared/domain/data-types/import-service";
import { sqsSdk } from "#shared/queue/sqs-sdk";

/** The legacy-import queue: one message per import step. */
export const sqsImportQueue: ImportQueue = {
  async send(message) {
    const { client, sdk } = await sqsSdk();
    await client.send(new sdk.SendMessageCommand({ QueueUrl: appConfig().IMPORT_QUEUE_URL, MessageBody: JSON.stringify(message) }));
  },
};
