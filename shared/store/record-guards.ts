import type { GuardEntry } from "#shared/domain/records/schema";
import { DELETE_FENCE_ATTRIBUTE, DELETE_FENCE_TTL_MS } from "#shared/store/delete-fence";
import { tableName, type TransactItem } from "#shared/store/dynamo";
import { type ItemKey, keys } from "#shared/store/keys";

// Uniqueness guards and the data type version check, shared by record writes (record-store.ts) and
// entity custom values (extension-store.ts); apart from the record store so hub and vehicle writes
// do not load the record schemas and search.

/**
 * Who holds uniqueness guards of a data type: a record, or an entity's custom values
 * (shared/store/extension-store.ts). A guard item carries its owner's id as `recordId`.
 */
export interface GuardOwner {
  organizationId: string;
  dataTypeId: string;
  ownerId: string;
  guards: GuardEntry[];
}

const guardKey = (owner: Pick<GuardOwner, "organizationId" | "dataTypeId">, guard: GuardEntry) =>
  keys.uniqueGuard(owner.organizationId, owner.dataTypeId, guard.name, guard.scope, guard.value);
const guardId = (owner: Pick<GuardOwner, "dataTypeId">, guard: GuardEntry) => `${owner.dataTypeId}\u0000${guard.name}\u0000${guard.scope}\u0000${guard.value}`;

/** Free, or already this record's (never another record's). */
const ownedOrFree = (recordId: string) => ({ ConditionExpression: "attribute_not_exists(PK) OR recordId = :recordId", ExpressionAttributeValues: { ":recordId": recordId } });

export function put(item: Record<string, unknown>, condition?: { ConditionExpression: string; ExpressionAttributeValues?: Record<string, unknown> }): TransactItem {
  return { Put: { TableName: tableName(), Item: item, ...condition } };
}

export function remove(key: ItemKey, condition?: { ConditionExpression: string; ExpressionAttributeValues?: Record<string, unknown> }): TransactItem {
  return { Delete: { TableName: tableName(), Key: key, ...condition } };
}

/**
 * Transaction item: the data type is still at the `version` the values were validated against and
 * no delete of it is in progress. Shared with entity custom values (shared/store/extension-store.ts).
 */
export function dataTypeVersionCheck(organizationId: string, dataTypeId: string, version: number): TransactItem {
  return {
    ConditionCheck: {
      TableName: tableName(),
      Key: keys.dataType(organizationId, dataTypeId),
      // Same version as validated (a changed rule re-runs), and no delete in progress (a fence older than its TTL is a crashed delete).
      ConditionExpression: "version = :typeVersion AND (attribute_not_exists(#fence) OR #fence < :fenceCutoff)",
      ExpressionAttributeNames: { "#fence": DELETE_FENCE_ATTRIBUTE },
      ExpressionAttributeValues: { ":typeVersion": version, ":fenceCutoff": Date.now() - DELETE_FENCE_TTL_MS },
    },
  };
}

const guardItem = (owner: GuardOwner, guard: GuardEntry) => ({ ...guardKey(owner, guard), entity: "recordGuard", recordId: owner.ownerId, dataTypeId: owner.dataTypeId });

/**
 * The transaction items that move an owner's guards from `previous` to `next` (either may be
 * absent): guards no longer held are deleted (if still the owner's), new ones claimed (free or
 * already the owner's; a failed claim is labelled with the guard's name).
 */
export function guardMoves(previous: GuardOwner | undefined, next: GuardOwner | undefined): Array<[TransactItem, { kind: "guard"; name: string } | { kind: "other" }]> {
  const items: Array<[TransactItem, { kind: "guard"; name: string } | { kind: "other" }]> = [];
  const oldGuards = new Map((previous?.guards ?? []).map((guard) => [guardId(previous as GuardOwner, guard), guard]));
  const newGuards = new Map((next?.guards ?? []).map((guard) => [guardId(next as GuardOwner, guard), guard]));
  for (const [id, guard] of oldGuards) if (!newGuards.has(id) && previous) items.push([remove(guardKey(previous, guard), ownedOrFree(previous.ownerId)), { kind: "other" }]);
  for (const [id, guard] of newGuards) if (!oldGuards.has(id) && next) items.push([put(guardItem(next, guard), ownedOrFree(next.ownerId)), { kind: "guard", name: guard.name }]);
  return items;
}
