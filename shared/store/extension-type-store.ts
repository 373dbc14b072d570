import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { StandardEntity } from "#shared/domain/data-types/schema";
import type { ExtensionType } from "#shared/domain/extensions/service";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";

// Apart from extension-store.ts (the custom value items every hub and vehicle write uses): only the
// custom values' composition root reads extension types. The data type store (and the data type
// schemas it parses with) is loaded when an organization has an extension type, not at cold start:
// most hub, vehicle and extension requests find no extension guard and never need it.

/** The organization's extension data type for the entity: the extension guard names it (consistent read). */
export async function findExtensionType(organizationId: string, entity: StandardEntity): Promise<ExtensionType | undefined> {
  const guard = await documentClient().send(
    new GetCommand({ TableName: tableName(), Key: keys.dataTypeExtensionGuard(organizationId, entity), ConsistentRead: true }),
  );
  const dataTypeId = guard.Item?.dataTypeId;
  if (typeof dataTypeId !== "string") return undefined;
  const { dynamoDataTypeStore } = await import("#shared/store/data-type-store");
  const found = await dynamoDataTypeStore.findById(organizationId, dataTypeId);
  return found?.dataType.extends?.entity === entity ? found : undefined;
}
