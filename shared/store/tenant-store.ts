import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { Tenant } from "#shared/domain/tenants/plans";
import { conditionally, documentClient, tableName } from "#shared/store/dynamo";
import { keys, withoutStorageAttributes } from "#shared/store/keys";

/**
 * Tenant records (one per enrolled organization, `ORG#o / TENANT`, listed on GSI1 `TENANTS`). The
 * authorizer only reads one (GetItem); the operator's CLI writes them.
 */
function tenantFromItem(item: Record<string, unknown>): Tenant {
  return withoutStorageAttributes(item) as unknown as Tenant;
}

export async function findTenant(organizationId: string): Promise<Tenant | undefined> {
  const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.tenant(organizationId) }));
  return output.Item ? tenantFromItem(output.Item) : undefined;
}

/** Writes a new tenant record; false when the organization is enrolled already. */
export async function insertTenant(tenant: Tenant): Promise<boolean> {
  return conditionally(
    documentClient().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...tenant,
          ...keys.tenant(tenant.organizationId),
          GSI1PK: keys.tenantsIndexPartition,
          GSI1SK: tenant.organizationId,
          entity: "tenant",
        },
        ConditionExpression: "attribute_not_exists(PK)",
      }),
    ),
  );
}

/** Changes an enrolled tenant's plan, status or key; undefined when the organization is not enrolled. */
export async function updateTenant(
  organizationId: string,
  change: Partial<Pick<Tenant, "plan" | "planHistory" | "status" | "apiKeyId" | "apiKeyValue">>,
  updatedTime: string,
): Promise<Tenant | undefined> {
  const fields = Object.entries({ ...change, updatedTime }).filter(([, value]) => value !== undefined);
  try {
    const output = await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.tenant(organizationId),
        ConditionExpression: "attribute_exists(PK)",
        UpdateExpression: `SET ${fields.map((_, i) => `#f${i} = :v${i}`).join(", ")}`,
        ExpressionAttributeNames: Object.fromEntries(fields.map(([name], i) => [`#f${i}`, name])),
        ExpressionAttributeValues: Object.fromEntries(fields.map(([, value], i) => [`:v${i}`, value])),
        ReturnValues: "ALL_NEW",
      }),
    );
    return output.Attributes ? tenantFromItem(output.Attributes) : undefined;
  } catch (error) {
    if (error instanceof Error && error.name === "ConditionalCheckFailedException") return undefined;
    throw error;
  }
}

/** Every tenant, by organization id (the operator's list; pages of 100 until done). */
export async function listTenants(): Promise<Tenant[]> {
  const tenants: Tenant[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const output = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: "GSI1",
        KeyConditionExpression: "GSI1PK = :tenants",
        ExpressionAttributeValues: { ":tenants": keys.tenantsIndexPartition },
        ExclusiveStartKey: startKey,
        Limit: 100,
      }),
    );
    tenants.push(...(output.Items ?? []).map(tenantFromItem));
    startKey = output.LastEvaluatedKey;
  } while (startKey);
  return tenants;
}
