import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { WebhookStore } from "#shared/domain/webhooks/service";
import { type WebhookRecord, webhookRecordSchema } from "#shared/domain/webhooks/schema";
import { documentClient, tableName, type TransactItem } from "#shared/store/dynamo";
import { concurrentUpdateError, getVersioned, replaceItem } from "#shared/store/items";
import { keys } from "#shared/store/keys";
import { queryPage } from "#shared/store/pagination";
import { deleteVersioned, put, putNew, transactLabelled } from "#shared/store/transactions";

const webhookItem = (record: WebhookRecord): Record<string, unknown> => ({ ...record, entity: "webhook" });

export const dynamoWebhookStore: WebhookStore = {
  /**
   * The plan's cap is exact: the create's transaction puts the subscription and raises the
   * organization's count item on the condition that it is below the cap, so of N simultaneous
   * creates at cap − 1 exactly one commits. Every create and delete of one organization names that
   * item (a shared item, which DynamoDB serialises: docs/architecture.md, "Writes without shared
   * items"); subscriptions are created and deleted rarely, so that costs nothing measurable. An
   * organization whose subscriptions predate the count item gets it seeded from a count of them,
   * on the condition that it still does not exist.
   */
  async insertWithinCap(record, cap) {
    const organizationId = record.organizationId;
    // A plan may allow none (and a count query of Limit 0 is refused by DynamoDB).
    if (cap <= 0) return false;
    const subscription = putNew(keys.webhook(organizationId, record._id), webhookItem(record));
    for (let attempt = 0; attempt < 5; attempt++) {
      const count = await readCount(organizationId);
      const seeded = count === undefined ? await countUpTo(organizationId, cap) : undefined;
      if ((count ?? seeded ?? 0) >= cap) return false;
      const raise: TransactItem =
        count === undefined
          ? put(
              { ...keys.webhookCount(organizationId), entity: "webhookCount", count: (seeded ?? 0) + 1 },
              { ConditionExpression: "attribute_not_exists(PK)" },
            )
          : updateCount(organizationId, "SET #count = #count + :one", "#count < :cap", { ":cap": cap });
      const failed = await transactLabelled([
        [subscription, "subscription"],
        [raise, "count"],
      ] as const);
      if (!failed) return true;
      // Ids are fresh; a collision is a server fault, not a client mistake.
      if (failed.includes("subscription")) throw concurrentUpdateError();
      // The count reached the cap meanwhile, or another create seeded it: read it again.
    }
    throw concurrentUpdateError();
  },

  async find(organizationId, webhookId) {
    const found = await getVersioned<WebhookRecord>(keys.webhook(organizationId, webhookId));
    return found && { record: webhookRecordSchema.parse(found.value), version: found.version };
  },

  async replace(record, expectedVersion) {
    await replaceItem(keys.webhook(record.organizationId, record._id), webhookItem(record), expectedVersion);
  },

  /**
   * Deletes the subscription and lowers the count in one transaction. A count not seeded yet is seeded
   * here too (the subscriptions counted, less this one), on the same `attribute_not_exists` condition as
   * a create's seeding: a create and a delete racing on an unseeded organization then conflict on the
   * one count item and the loser reads it again, so the count never keeps a deleted subscription.
   */
  async remove(organizationId, webhookId, expectedVersion) {
    const subscription = deleteVersioned(keys.webhook(organizationId, webhookId), expectedVersion);
    for (let attempt = 0; attempt < 5; attempt++) {
      const count = await readCount(organizationId);
      const lower =
        count === undefined
          ? put(
              {
                ...keys.webhookCount(organizationId),
                entity: "webhookCount",
                count: Math.max(0, (await countUpTo(organizationId, seedCountBound)) - 1),
              },
              { ConditionExpression: "attribute_not_exists(PK)" },
            )
          : updateCount(organizationId, "SET #count = #count - :one", "attribute_exists(PK)", {});
      const failed = await transactLabelled([
        [subscription, "subscription"],
        [lower, "count"],
      ] as const);
      if (!failed) return true;
      if (failed.includes("subscription")) return false;
      // The count item was seeded (or removed) meanwhile: read it again.
    }
    throw concurrentUpdateError();
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

/** Counted when a delete seeds the count item: above any plan's cap, so every subscription is counted. */
const seedCountBound = 1_000;

/** The organization's subscription count, undefined when its count item does not exist yet. */
async function readCount(organizationId: string): Promise<number | undefined> {
  const output = await documentClient().send(
    new GetCommand({ TableName: tableName(), Key: keys.webhookCount(organizationId), ConsistentRead: true }),
  );
  return output.Item ? Number(output.Item.count ?? 0) : undefined;
}

function updateCount(organizationId: string, update: string, condition: string, values: Record<string, unknown>): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: keys.webhookCount(organizationId),
      UpdateExpression: update,
      ConditionExpression: condition,
      ExpressionAttributeNames: condition.includes("#count") || update.includes("#count") ? { "#count": "count" } : undefined,
      ExpressionAttributeValues: { ":one": 1, ...values },
    },
  };
}

/** How many subscriptions the organization has, counting at most `upTo` (one bounded query; seeds the count item). */
async function countUpTo(organizationId: string, upTo: number): Promise<number> {
  const output = await documentClient().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.organizationPartition(organizationId), ":prefix": keys.webhookPrefix },
      Select: "COUNT",
      Limit: upTo,
      ConsistentRead: true,
    }),
  );
  return output.Count ?? 0;
}
