import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient, tableName } from "#shared/store/dynamo";
import { type ItemKey, keys } from "#shared/store/keys";

/**
 * Whether a hub or a vehicle of the organization exists, for relations of records and custom values
 * to them: a key-only read, without parsing the item, so record functions load neither the hub nor
 * the vehicle schemas. Hubs are read consistently (like every hub read of the writes that reference
 * hubs), vehicles eventually (like the vehicle store's reads): the same reads, at the same cost, as before.
 */
async function itemExists(key: ItemKey, consistent: boolean): Promise<boolean> {
  const output = await documentClient().send(
    new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: consistent, ProjectionExpression: "PK" }),
  );
  return output.Item !== undefined;
}

export const entityExistence = {
  hubExists: (organizationId: string, hubId: string) => itemExists(keys.hub(organizationId, hubId), true),
  vehicleExists: (organizationId: string, vehicleId: string) => itemExists(keys.vehicle(organizationId, vehicleId), false),
};
