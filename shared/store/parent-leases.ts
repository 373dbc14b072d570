import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { missingHubError } from "#shared/domain/hubs/errors";
import { recordErrors } from "#shared/domain/records/errors";
import { DELETE_FENCE_ATTRIBUTE, DELETE_FENCE_TTL_MS } from "#shared/store/delete-fence";
import { documentClient, tableName } from "#shared/store/dynamo";
import { type ItemKey, keys } from "#shared/store/keys";
import type { Lease } from "#shared/store/transactions";

/**
 * Parent leases (docs/architecture.md, "Writes without shared items"): the frequent writer's
 * confirmation that the parent it depends on is still there, unfenced and (for data types) at the
 * version its values were checked against. One strongly consistent GetItem, never a transaction
 * item, so siblings written at once never name a common item.
 */

async function readParent(key: ItemKey): Promise<Record<string, unknown> | undefined> {
  const output = await documentClient().send(
    new GetCommand({
      TableName: tableName(),
      Key: key,
      ConsistentRead: true,
      ProjectionExpression: "PK, version, #fence",
      ExpressionAttributeNames: { "#fence": DELETE_FENCE_ATTRIBUTE },
    }),
  );
  return output.Item;
}

/** A fence younger than its TTL: a rare writer is waiting out the leases (an older one is a crashed writer's, ignored). */
export function isFenced(item: Record<string, unknown>): boolean {
  const fence = item[DELETE_FENCE_ATTRIBUTE];
  return typeof fence === "number" && fence >= Date.now() - DELETE_FENCE_TTL_MS;
}

/** The data type is at `version` and no change or delete of it is in progress; else 409 `data-003`. */
export function dataTypeLease(organizationId: string, dataTypeId: string, version: number): Lease {
  return async () => {
    const item = await readParent(keys.dataType(organizationId, dataTypeId));
    if (!item || Number(item.version ?? 0) !== version || isFenced(item)) throw recordErrors.dataTypeChanged();
  };
}

/** The hub exists and no delete of it is in progress; else 400 on `field`. */
export function hubLease(organizationId: string, hubId: string, field = "hubId"): Lease {
  return async () => {
    const item = await readParent(keys.hub(organizationId, hubId));
    if (!item || isFenced(item)) throw missingHubError(field);
  };
}
