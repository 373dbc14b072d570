import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { WebhookStore } from "#shared/domain/webhooks/service";
import { type WebhookRecord, webhookRecordSchema } from "#shared/domain/webhooks/schema";
import { documentClient, tableName } from "#shared/store/dynamo";
import { concurrentUpdateError, deleteItem, getVersioned, insertItem, replaceItem } from "#shared/store/items";
import { keys } from "#shared/store/keys";
import { queryPage } from "#shared/store/pagination";

const webhookItem = (record: WebhookRecord): Record<string, unknown> => ({ ...record, entity: "webhook" });

export const dynamoWebhookStore: WebhookStore = {
  async insert(record) {
    // Ids are fresh; a collision is a server fault, not a client mistake.
    if (!(await insertItem(keys.webhook(record.organizationId, record._id), webhookItem(record)))) throw concurrentUpdateError();
  },

  async find(organizationId, webhookId) {
    const found = await getVersioned<WebhookRecord>(keys.webhook(organizationId, webhookId));
    return found && { record: webhookRecordSchema.parse(found.value), version: found.version };
  },

  async replace(record, expectedVersion) {
    await replaceItem(keys.webhook(record.organizationId, record._id), webhookItem(record), expectedVersion);
  },

  remove(organizationId, webhookId, expectedVersion) {
    return deleteItem(keys.webhook(organizationId, webhookId), expectedVersion);
  },

  async list(organizationId, page) {
    const found = await queryPage<Record<string, unknown>>({
      partition: keys.organizationPartition(organizationId),
      sortKeyPrefix: keys.webhookPrefix,
      limit: page.limit,
      cursor: page.cursor,
    });
    return { items: found.items.map((item) => webhookRecordSchema.parse(item)), nextCursor: found.nextCursor };
  },

  async countUpTo(organizationId, upTo) {
    const output = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues: { ":pk": keys.organizationPartition(organizationId), ":prefix": keys.webhookPrefix },
        Select: "COUNT",
        Limit: upTo,
      }),
    );
    return output.Count ?? 0;
  },
};

/** Every subscription of an organization (the publisher's fan-out; bounded by the plan's cap). */
export async function webhooksOf(organizationId: string, max: number): Promise<WebhookRecord[]> {
  const output = await documentClient().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.organizationPartition(organizationId), ":prefix": keys.webhookPrefix },
      Limit: max,
      ConsistentRead: true,
    }),
  );
  return (output.Items ?? []).map((item) => webhookRecordSchema.parse(item));
}
