import { GetCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { dataTypeConflicts } from "#shared/domain/data-types/errors";
import { type DataType, dataTypeSchema } from "#shared/domain/data-types/schema";
import type { DataTypeStore, ReadVersion, VersionedDataType } from "#shared/domain/data-types/service";
import { NotFoundError } from "#shared/domain/errors";
import { documentClient, isConditionalCheckFailed, tableName, type TransactItem, transactLabelled } from "#shared/store/dynamo";
import { concurrentUpdateError, getVersioned } from "#shared/store/items";
import { type ItemKey, keyPart, keys } from "#shared/store/keys";
import { queryPage } from "#shared/store/pagination";
import { DELETE_FENCE_ATTRIBUTE } from "#shared/store/delete-fence";

/**
 * Data types over DynamoDB (layout in docs/api/data-types.md and shared/store/keys.ts):
 * - type item `ORG#o / DT#id` (entity `dataType`, `version`, GSI1 = `ORG#o#DTNAME / <lower name>#id`);
 * - name guard `ORG#o / DTNAME#<lower name>` carrying `dataTypeId` (uniqueness + lookup by name);
 * - extension guard `ORG#o / DTEXT#<entity>` carrying `dataTypeId` (one extension per entity).
 * Every write is one TransactWriteItems over these plus a version check of each related data
 * type; failures are decoded from CancellationReasons by position, never from message text.
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

const guardFree = "attribute_not_exists(PK) OR dataTypeId = :dataTypeId";

function putGuard(key: ItemKey, dataType: DataType, attributes: Record<string, unknown>): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: { ...key, ...attributes, dataTypeId: dataType._id },
      // Free, or already ours (a rename that only changes letter case keeps the same guard).
      ConditionExpression: guardFree,
      ExpressionAttributeValues: { ":dataTypeId": dataType._id },
    },
  };
}

function deleteGuard(key: ItemKey, dataTypeId: string): TransactItem {
  return {
    Delete: { TableName: tableName(), Key: key, ConditionExpression: guardFree, ExpressionAttributeValues: { ":dataTypeId": dataTypeId } },
  };
}

function relatedChecks(organizationId: string, related: readonly ReadVersion[]): Array<[TransactItem, FailureMeaning]> {
  return related.map(({ dataTypeId, version }) => [
    {
      ConditionCheck: {
        TableName: tableName(),
        Key: keys.dataType(organizationId, dataTypeId),
        ConditionExpression: "version = :version",
        ExpressionAttributeValues: { ":version": version },
      },
    },
    "related",
  ]);
}

function nameGuardItem(dataType: DataType): TransactItem {
  return putGuard(keys.dataTypeNameGuard(dataType.organizationId, dataType.name), dataType, { entity: "dataTypeName", name: dataType.name });
}

function extensionGuardItem(dataType: DataType, entity: string): TransactItem {
  return putGuard(keys.dataTypeExtensionGuard(dataType.organizationId, entity), dataType, { entity: "dataTypeExtension", extendsEntity: entity });
}

async function transact(items: Array<[TransactItem, FailureMeaning]>, dataType: DataType, typeFailed: () => Error | Promise<Error>): Promise<void> {
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

/** Sets (or clears) the delete fence, bumping the version; false when the type moved on meanwhile. */
async function setDeleteFence(dataType: DataType, expectedVersion: number, fencedAt: number | undefined): Promise<boolean> {
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.dataType(dataType.organizationId, dataType._id),
        UpdateExpression: fencedAt === undefined ? "REMOVE #fence SET version = :next" : "SET #fence = :fencedAt, version = :next",
        ConditionExpression: "version = :expected",
        ExpressionAttributeNames: { "#fence": DELETE_FENCE_ATTRIBUTE },
        ExpressionAttributeValues: { ":expected": expectedVersion, ":next": expectedVersion + 1, ...(fencedAt === undefined ? {} : { ":fencedAt": fencedAt }) },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}

export const dynamoDataTypeStore: DataTypeStore = {
  findById,

  async findByName(organizationId, name) {
    const guard = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.dataTypeNameGuard(organizationId, name) }));
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

  async replace(next, previous, expectedVersion, related) {
    const organizationId = next.organizationId;
    const items: Array<[TransactItem, FailureMeaning]> = [
      [
        {
          Put: {
            TableName: tableName(),
            Item: typeItem(next, expectedVersion + 1),
            ConditionExpression: "version = :expected",
            ExpressionAttributeValues: { ":expected": expectedVersion },
          },
        },
        "type",
      ],
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
    await transact(items, next, async () => ((await findById(organizationId, next._id)) ? concurrentUpdateError() : new NotFoundError()));
  },

  /**
   * Race-safe against record writes that follow the contract in docs/api/data-types.md (each record
   * write checks the type item has no fresh `deletingSince`): 1. fence the type (versioned
   * update); 2. look for one record with a consistent read; 3. delete type and guards in one
   * transaction conditional on the fenced version, or lift the fence and report the records.
   */
  async removeUnlessRecords(dataType, expectedVersion) {
    const organizationId = dataType.organizationId;
    if (!(await setDeleteFence(dataType, expectedVersion, Date.now()))) {
      throw (await findById(organizationId, dataType._id)) ? concurrentUpdateError() : new NotFoundError();
    }
    const fencedVersion = expectedVersion + 1;
    if (await hasRecords(organizationId, dataType._id)) {
      await setDeleteFence(dataType, fencedVersion, undefined);
      return "has-records";
    }
    const items: Array<[TransactItem, FailureMeaning]> = [
      [
        {
          Delete: {
            TableName: tableName(),
            Key: keys.dataType(organizationId, dataType._id),
            ConditionExpression: "version = :expected",
            ExpressionAttributeValues: { ":expected": fencedVersion },
          },
        },
        "type",
      ],
      [deleteGuard(keys.dataTypeNameGuard(organizationId, dataType.name), dataType._id), "staleGuard"],
    ];
    if (dataType.extends) items.push([deleteGuard(keys.dataTypeExtensionGuard(organizationId, dataType.extends.entity), dataType._id), "staleGuard"]);
    await transact(items, dataType, concurrentUpdateError);
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
