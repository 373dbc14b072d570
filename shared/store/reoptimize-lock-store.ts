import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { ReoptimizeLocks } from "#shared/domain/routing-results/service";
import { conditionally, documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";

/**
 * The hub's re-optimization lock (`ORG#o / REOPT#<hub>`): one conditional put takes it when it is
 * absent, expired, or held by the result named as `replacing` (one the service found finished).
 * Its own item, written only by re-optimizations: no other write names it.
 */
export const dynamoReoptimizeLocks: ReoptimizeLocks = {
  take: (organizationId, hubId, resultId, until, now, replacing) =>
    conditionally(
      documentClient().send(
        new PutCommand({
          TableName: tableName(),
          Item: { ...keys.reoptimizeLock(organizationId, hubId), entity: "reoptimizeLock", resultId, leaseUntil: until.getTime() },
          ConditionExpression: `attribute_not_exists(PK) OR leaseUntil < :now${replacing !== undefined ? " OR resultId = :replacing" : ""}`,
          ExpressionAttributeValues: { ":now": now.getTime(), ...(replacing !== undefined ? { ":replacing": replacing } : {}) },
        }),
      ),
    ),
  async holder(organizationId, hubId, now) {
    const output = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.reoptimizeLock(organizationId, hubId), ConsistentRead: true }),
    );
    const item = output.Item;
    return item && Number(item.leaseUntil) >= now.getTime() ? String(item.resultId) : undefined;
  },
};
