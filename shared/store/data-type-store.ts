import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { dataTypeConflicts } from "#shared/domain/data-types/errors";
import { type DataType, dataTypeSchema } from "#shared/domain/data-types/schema";
import type { DataTypeStore, ReadVersion, VersionedDataType } from "#shared/domain/data-types/service";
import { NotFoundError } from "#shared/domain/errors";
import { documentClient, tableName, type TransactItem } from "#shared/store/dynamo";
import { claimGuard, conditionCheck, put, releaseGuard, remove, transactLabelled, waitOutLeases } from "#shared/store/transactions";
import { concurrentUpdateError, getVersioned } from "#shared/store/items";
import { type ItemKey, keyPart, keys } from "#shared/store/keys";
import { queryPage } from "#shared/store/pagination";
import { DELETE_FENCE_ATTRIBUTE } from "#shared/store/delete-fence";
import { liftParentFence, setParentFence } from "#shared/store/parent-fence";

/**
 * Data types over DynamoDB (layout in docs/api/data-types.md and shared/store/keys.ts):
 * - type item `ORG#o / DT#id` (entity `dataType`, `version`, GSI1 = `ORG#o#DTNAME / <lower name>#id`);
 * - name guard `ORG#o / DTNAME#<lower name>` carrying `dataTypeId` (uniqueness + lookup by name);
 * - extension guard `ORG#o / DTEXT#<entity>` carrying `dataTypeId` (one extension per entity).
 * Every write is one TransactWriteItems over these plus a version check of each related data
 * type; failures are decoded by label, never from message text.
 *
 * Records and custom values never name the type item in their transactions: they confirm it with a
 * parent lease (shared/store/parent-leases.ts). So a change or delete of the type, the rare writer,
 * first fences the type (`deletingSince`, a versioned update) and waits out the leases
 * (`waitOutLeases`): from then on no write validated against the previous version can commit
 * (docs/architecture.md, "Writes without shared items").
 */

/** Why a transaction item can fail, in request order, so a cancellation maps to the right error. */
type FailureMeaning = "type" | "nameGuard" | "extensionGuard" | "staleGuard" | "related";

function typeItem(dataType: DataType, version: number): Record<string, unknown> {
  return {
    ...dataType,
    ...keys.dataType(dataType.organizationId, dataType._id),
    entity: "dataType",
    version,
    GSI1PK: keys.dataTypesByName(dataType.organizationId),
    GSI1SK: keys.dataTypeNameSortKey(dataType.name, dataType._id),
  };
}

/** Free, or already ours (a rename that only changes letter case keeps the same guard). */
const putGuard = (key: ItemKey, dataType: DataType, attributes: Record<string, unknown>): TransactItem =>
  claimGuard(key, "dataTypeId", dataType._id, attributes);
const deleteGuard = (key: ItemKey, dataTypeId: string): TransactItem => releaseGuard(key, "dataTypeId", dataTypeId);

function relatedChecks(organizationId: string, related: readonly ReadVersion[]): Array<[TransactItem, FailureMeaning]> {
  return related.map(({ dataTypeId, version }) => [
    conditionCheck(keys.dataType(organizationId, dataTypeId), {
      ConditionExpression: "version = :version",
      ExpressionAttributeValues: { ":version": version },
    }),
    "related",
  ]);
}

function nameGuardItem(dataType: DataType): TransactItem {
  return putGuard(keys.dataTypeNameGuard(dataType.organizationId, dataType.name), dataType, {
    entity: "dataTypeName",
    name: dataType.name,
  });
}

function extensionGuardItem(dataType: DataType, entity: string): TransactItem {
  return putGuard(keys.dataTypeExtensionGuard(dataType.organizationId, entity), dataType, {
    entity: "dataTypeExtension",
    extendsEntity: entity,
  });
}

async function transact(
  items: Array<[TransactItem, FailureMeaning]>,
  dataType: DataType,
  typeFailed: () => Error | Promise<Error>,
): Promise<void> {
  const failed = await transactLabelled(items);
  if (failed === undefined) return;
  if (failed.includes("type")) throw await typeFailed();
  if (failed.includes("nameGuard")) throw dataTypeConflicts.nameTaken(dataType.name);
  if (failed.includes("extensionGuard")) throw dataTypeConflicts.extensionTaken(dataType.extends?.entity ?? "");
  if (failed.includes("related")) throw dataTypeConflicts.relatedChanged();
  // Stale guard or a conflict between concurrent transactions on the same items.
  throw concurrentUpdateError();
}

function parseStored(found: { value: unknown; version: number } | undefined): VersionedDataType | undefined {
  return found && { dataType: dataTypeSchema.parse(found.value), version: found.version };
}

async function findById(organizationId: string, dataTypeId: string): Promise<VersionedDataType | undefined> {
  return parseStored(await getVersioned<DataType>(keys.dataType(organizationId, dataTypeId)));
}

async function hasRecords(organizationId: string, dataTypeId: string): Promise<boolean> {
  const output = await documentClient().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: "PK = :pk",
      ExpressionAttributeValues: { ":pk": keys.recordPartition(organizationId, dataTypeId) },
      Limit: 1,
      ConsistentRead: true,
      ProjectionExpression: "PK",
    }),
  );
  return (output.Items?.length ?? 0) > 0;
}

/**
 * Sets the fence (`deletingSince` = now) if the type is still at `expectedVersion` and not fenced by
 * another writer (a fence older than its TTL is a crashed writer's); the version is unchanged, so
 * the answer's ETag stays the version + 1 of the write that follows. Undefined when it lost.
 */
function setFence(dataType: DataType, expectedVersion: number): Promise<number | undefined> {
  return setParentFence(keys.dataType(dataType.organizationId, dataType._id), expectedVersion);
}

/** Lifts our fence (the write behind it did not happen); a fence already gone or another's is left alone. */
function liftFence(dataType: DataType, fencedAt: number): Promise<void> {
  return liftParentFence(keys.dataType(dataType.organizationId, dataType._id), fencedAt);
}

/** Fences the type and waits out the leases of writes validated against it; 404/409 when it moved on. */
async function fenceAndWait(dataType: DataType, expectedVersion: number): Promise<number> {
  const fencedAt = await setFence(dataType, expectedVersion);
  if (fencedAt === undefined) throw (await findById(dataType.organizationId, dataType._id)) ? concurrentUpdateError() : new NotFoundError();
  await waitOutLeases();
  return fencedAt;
}

/** The type item's write behind our fence: same version, our fence. */
const fencedCondition = (expectedVersion: number, fencedAt: number) => ({
  ConditionExpression: "version = :expected AND #fence = :fencedAt",
  ExpressionAttributeNames: { "#fence": DELETE_FENCE_ATTRIBUTE },
  ExpressionAttributeValues: { ":expected": expectedVersion, ":fencedAt": fencedAt },
});

export const dynamoDataTypeStore: DataTypeStore = {
  findById,

  async findByName(organizationId, name) {
    const guard = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.dataTypeNameGuard(organizationId, name) }),
    );
    const dataTypeId = guard.Item?.dataTypeId;
    if (typeof dataTypeId !== "string") return undefined;
    const found = await findById(organizationId, dataTypeId);
    return found && found.dataType.name.toLowerCase() === name.toLowerCase() ? found : undefined;
  },

  async create(dataType, related) {
    const items: Array<[TransactItem, FailureMeaning]> = [
      [{ Put: { TableName: tableName(), Item: typeItem(dataType, 1), ConditionExpression: "attribute_not_exists(PK)" } }, "type"],
      [nameGuardItem(dataType), "nameGuard"],
    ];
    if (dataType.extends) items.push([extensionGuardItem(dataType, dataType.extends.entity), "extensionGuard"]);
    items.push(...relatedChecks(dataType.organizationId, related));
    // A fresh ObjectId already taken means something is badly wrong, not a client mistake.
    await transact(items, dataType, concurrentUpdateError);
  },

  /**
   * Records and custom values validated against the previous version may still be committing:
   * fence, wait out their leases, then write the new version (which drops the fence).
   */
  async replace(next, previous, expectedVersion, related) {
    const organizationId = next.organizationId;
    const fencedAt = await fenceAndWait(previous, expectedVersion);
    const items: Array<[TransactItem, FailureMeaning]> = [
      [put(typeItem(next, expectedVersion + 1), fencedCondition(expectedVersion, fencedAt)), "type"],
      // Renaming moves the name guard in the same transaction.
      [nameGuardItem(next), "nameGuard"],
    ];
    if (previous.name.toLowerCase() !== next.name.toLowerCase()) {
      items.push([deleteGuard(keys.dataTypeNameGuard(organizationId, previous.name), previous._id), "staleGuard"]);
    }
    if (next.extends) items.push([extensionGuardItem(next, next.extends.entity), "extensionGuard"]);
    if (previous.extends && previous.extends.entity !== next.extends?.entity) {
      items.push([deleteGuard(keys.dataTypeExtensionGuard(organizationId, previous.extends.entity), previous._id), "staleGuard"]);
    }
    items.push(...relatedChecks(organizationId, related));
    try {
      await transact(items, next, async () => ((await findById(organizationId, next._id)) ? concurrentUpdateError() : new NotFoundError()));
    } catch (error) {
      await liftFence(previous, fencedAt);
      throw error;
    }
  },

  /**
   * Race-safe against record writes and custom values (they confirm the type by a parent lease,
   * shared/store/parent-leases.ts): 1. fence the type; 2. wait out the leases; 3. look for one
   * record with a consistent base-table query; 4. delete type and guards in one transaction
   * conditional on our fence, or lift the fence and report the records.
   */
  async removeUnlessRecords(dataType, expectedVersion) {
    const organizationId = dataType.organizationId;
    const fencedAt = await fenceAndWait(dataType, expectedVersion);
    if (await hasRecords(organizationId, dataType._id)) {
      await liftFence(dataType, fencedAt);
      return "has-records";
    }
    const items: Array<[TransactItem, FailureMeaning]> = [
      [remove(keys.dataType(organizationId, dataType._id), fencedCondition(expectedVersion, fencedAt)), "type"],
      [deleteGuard(keys.dataTypeNameGuard(organizationId, dataType.name), dataType._id), "staleGuard"],
    ];
    if (dataType.extends)
      items.push([deleteGuard(keys.dataTypeExtensionGuard(organizationId, dataType.extends.entity), dataType._id), "staleGuard"]);
    try {
      await transact(items, dataType, concurrentUpdateError);
    } catch (error) {
      await liftFence(dataType, fencedAt);
      throw error;
    }
    return "deleted";
  },

  async list(organizationId, filter) {
    const page = await queryPage<Record<string, unknown>>({
      index: "GSI1",
      partition: keys.dataTypesByName(organizationId),
      ...(filter.namePrefix !== undefined ? { sortKeyPrefix: keyPart(filter.namePrefix.toLowerCase()) } : {}),
      limit: filter.limit,
      cursor: filter.cursor,
    });
    return { items: page.items.map((item) => dataTypeSchema.parse(item)), nextCursor: page.nextCursor };
  },
};
