import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { ImportStateStore } from "#shared/domain/data-types/import-service";
import { dataTypeSchema } from "#shared/domain/data-types/schema";
import { conditionally, documentClient, tableName } from "#shared/store/dynamo";
import { keys, withoutStorageAttributes } from "#shared/store/keys";

/**
 * The import state on the data type item (`import`, docs/api/legacy-import.md). Moves are conditional
 * on the step they leave and never touch the item's `version`: record writes of the import check
 * that version, and nothing else may change the type while it is locked.
 */
export const dynamoImportStateStore: ImportStateStore = {
  async find(organizationId, dataTypeId) {
    const output = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.dataType(organizationId, dataTypeId), ConsistentRead: true }),
    );
    if (!output.Item) return undefined;
    return { dataType: dataTypeSchema.parse(withoutStorageAttributes(output.Item)), version: Number(output.Item.version ?? 0) };
  },

  advance(organizationId, dataTypeId, fromStep, next, unlock) {
    return conditionally(
      documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.dataType(organizationId, dataTypeId),
          UpdateExpression: unlock ? "SET #import = :next, locked = :unlocked" : "SET #import = :next",
          ConditionExpression: "#import.#step = :from",
          ExpressionAttributeNames: { "#import": "import", "#step": "step" },
          ExpressionAttributeValues: { ":next": next, ":from": fromStep, ...(unlock ? { ":unlocked": false } : {}) },
        }),
      ),
    );
  },
};
