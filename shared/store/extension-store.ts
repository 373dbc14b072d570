import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { StandardEntity } from "#shared/domain/data-types/schema";
import { extensionErrors } from "#shared/domain/extensions/errors";
import type { IdentityEntity, StoredCustomValues } from "#shared/domain/extensions/schema";
import type { CustomValuesWrite, EntityExtensionStore, StoredEntityExtension } from "#shared/domain/extensions/service";
import type { GuardEntry } from "#shared/domain/records/schema";
import { documentClient, tableName, type TransactItem } from "#shared/store/dynamo";
import { dataTypeLease } from "#shared/store/parent-leases";
import { type Lease, transactLabelled } from "#shared/store/transactions";
import { concurrentUpdateError } from "#shared/store/items";
import { keys } from "#shared/store/keys";
import { type GuardOwner, guardMoves } from "#shared/store/record-guards";

/**
 * Entity custom values over DynamoDB (docs/api/extensions.md):
 * - a vehicle or hub keeps its values on its own item: `custom` (field id → value) and
 *   `customIndex` `{ dataTypeId, guards }` (the type they were checked against, the claims held);
 * - a user, role or flow has one item `ORG#o / EXT#<entity>#<id>` with the same two attributes;
 * - uniqueness claims are the records' guard items (`ORG#o#DT#<type>#UQ / <field>#<entity>#<value>`,
 *   `recordId` = the entity id), claimed, moved and released in the entity write's transaction;
 *   the extension type is confirmed at the version the values were checked against by a parent
 *   lease, not named in the transaction (vehicles of one hub with custom values share no item).
 */

/** The attributes an entity item stores its custom values in (none when it has none). */
export function customAttributes(stored: StoredCustomValues | undefined): Record<string, unknown> {
  return stored ? { custom: stored.values, customIndex: { dataTypeId: stored.dataTypeId, guards: stored.guards } } : {};
}

/** The custom values an entity item holds, or undefined. */
export function parseCustomAttributes(item: Record<string, unknown>): StoredCustomValues | undefined {
  const index = item.customIndex as { dataTypeId?: unknown; guards?: unknown } | undefined;
  if (!index || typeof index.dataTypeId !== "string") return undefined;
  return {
    dataTypeId: index.dataTypeId,
    values: (item.custom as Record<string, unknown> | undefined) ?? {},
    guards: Array.isArray(index.guards) ? (index.guards as GuardEntry[]) : [],
  };
}

export type CustomMeaning = { kind: "guard"; name: string } | { kind: "other" };

const ownerOf = (organizationId: string, ownerId: string, stored: StoredCustomValues | undefined): GuardOwner | undefined =>
  stored && { organizationId, dataTypeId: stored.dataTypeId, ownerId, guards: stored.guards };

/**
 * The items a write of an entity adds to its transaction for its custom values: none when they stay
 * as they are; the guard moves and the type's lease when `write` sets new ones; the release of every
 * claim when the entity is deleted (`write` = "delete").
 */
export function customValueItems(
  organizationId: string,
  ownerId: string,
  previous: StoredCustomValues | undefined,
  write: CustomValuesWrite | "delete" | undefined,
): CustomValueItems {
  if (write === undefined) return { items: [], meanings: [], leases: [] };
  const next = write === "delete" ? undefined : write.next;
  const labelled: Array<[TransactItem, CustomMeaning]> = guardMoves(
    ownerOf(organizationId, ownerId, previous),
    ownerOf(organizationId, ownerId, next),
  );
  const leases = write === "delete" ? [] : [dataTypeLease(organizationId, write.next.dataTypeId, write.typeVersion)];
  return { items: labelled.map(([item]) => item), meanings: labelled.map(([, meaning]) => meaning), leases };
}

export interface CustomValueItems {
  items: TransactItem[];
  meanings: CustomMeaning[];
  leases: Lease[];
}

/** The error for failed custom-value items (their failed meanings), or undefined when none of them failed. */
export function customValueFailure(entity: StandardEntity, failed: CustomMeaning[]): Error | undefined {
  const fields = failed.flatMap((meaning) => (meaning.kind === "guard" ? meaning.name.replace(/^\+/, "").split("+") : []));
  if (fields.length > 0) return extensionErrors.valuesTaken(entity, [...new Set(fields)]);
  return undefined;
}

/** Failed meanings of the custom-value items, from the cancellation codes of exactly those items. */
export const failedMeanings = (codes: string[], meanings: CustomMeaning[]) =>
  meanings.filter((_, index) => codes[index] === "ConditionalCheckFailed");

function extensionItem(next: StoredEntityExtension, version: number): Record<string, unknown> {
  return {
    ...keys.entityExtension(next.organizationId, next.entity, next.entityId),
    entity: "entityExtension",
    extendsEntity: next.entity,
    entityId: next.entityId,
    organizationId: next.organizationId,
    ...customAttributes(next.custom),
    createdBy: next.createdBy,
    updatedBy: next.updatedBy,
    createdTime: next.createdTime,
    updatedTime: next.updatedTime,
    version,
  };
}

type ItemMeaning = CustomMeaning | { kind: "item" };

export const dynamoEntityExtensionStore: EntityExtensionStore = {
  async find(organizationId, entity, entityId) {
    const output = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.entityExtension(organizationId, entity, entityId), ConsistentRead: true }),
    );
    const item = output.Item;
    const custom = item && parseCustomAttributes(item);
    if (!item || !custom) return undefined;
    return {
      item: {
        entity: item.extendsEntity as IdentityEntity,
        entityId: item.entityId as string,
        organizationId: item.organizationId as string,
        custom,
        createdBy: item.createdBy as string,
        updatedBy: item.updatedBy as string,
        createdTime: item.createdTime as string,
        updatedTime: item.updatedTime as string,
      },
      version: Number(item.version ?? 0),
    };
  },

  async put(next, previous, typeVersion) {
    const condition = previous
      ? { ConditionExpression: "version = :expected", ExpressionAttributeValues: { ":expected": previous.version } }
      : { ConditionExpression: "attribute_not_exists(PK)" };
    const custom = customValueItems(next.organizationId, next.entityId, previous?.item.custom, { next: next.custom, typeVersion });
    const items: Array<[TransactItem, ItemMeaning]> = [
      [{ Put: { TableName: tableName(), Item: extensionItem(next, (previous?.version ?? 0) + 1), ...condition } }, { kind: "item" }],
      ...custom.items.map((item, index): [TransactItem, ItemMeaning] => [item, custom.meanings[index] as CustomMeaning]),
    ];
    const failed = await transactLabelled(items, { leases: custom.leases });
    if (failed === undefined) return;
    const customFailure = customValueFailure(
      next.entity,
      failed.filter((meaning): meaning is CustomMeaning => meaning.kind !== "item"),
    );
    // The item changed (or was created) by a concurrent PUT since it was read: 409, retry.
    if (failed.some((meaning) => meaning.kind === "item")) throw concurrentUpdateError();
    throw customFailure ?? concurrentUpdateError();
  },
};
