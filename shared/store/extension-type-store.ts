import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { StandardEntity } from "#shared/domain/data-types/schema";
import type { ExtensionType } from "#shared/domain/extensions/service";
import { dynamoDataTypeStore } from "#shared/store/data-type-store";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";

// Apart from extension-store.ts (the custom value items every hub and vehicle write uses): only the
// custom values' composition root reads extension types, so only it loads the data type schemas.

/** The organization's extension data type for the entity: the extension guard names it (consistent read). */
export async function findExtensionType(organizationId: string, entity: StandardEntity): Promise<ExtensionType | undefined> {
  const guard = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.dataTypeExtensionGuard(organizationId, entity), ConsistentRead: true }));
  const dataTypeId = guard.Item?.dataTypeId;
  if (typeof dataTypeId !== "string") return undefined;
  const found = await dynamoDataTypeStore.findById(organizationId, dataTypeId);
  return found?.dataType.extends?.entity === entity ? found : undefined;
}
