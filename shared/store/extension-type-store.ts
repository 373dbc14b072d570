import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { StandardEntity } from "#shared/domain/data-types/schema";
import type { ExtensionType } from "#shared/domain/extensions/service";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";

// Apart from extension-store.ts (the custom value items every hub and vehicle write uses): only the
// custom values' composition root reads extension types. The data type store (and the data type
// schemas it parses with) is loaded when an organization has an extension type, not at cold start:
// most hub, vehicle and extension requests find no extension guard and never need it.

/**
 * The organization's extension data type for the entity: the extension guard names it. A consistent
 * read (1 RRU) for writes, which check values against the type; reads (GET of a hub or vehicle, their
 * lists) pass `consistent: false` (0.5 RRU, the guard is a few dozen bytes): their answer may show
 * the custom values as they were for the moment DynamoDB takes to make a type's create or delete
 * visible to such reads (typically well under a second); no write is decided on it.
 */
export async function findExtensionType(
  organizationId: string,
  entity: StandardEntity,
  options: { consistent: boolean } = { consistent: true },
): Promise<ExtensionType | undefined> {
  const guard = await documentClient().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.dataTypeExtensionGuard(organizationId, entity),
      ConsistentRead: options.consistent,
    }),
  );
  const dataTypeId = guard.Item?.dataTypeId;
  if (typeof dataTypeId !== "string") return undefined;
  const { dynamoDataTypeStore } = await import("#shared/store/data-type-store");
  const found = await dynamoDataTypeStore.findById(organizationId, dataTypeId);
  return found?.dataType.extends?.entity === entity ? found : undefined;
}
