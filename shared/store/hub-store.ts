import { GetCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { NotFoundError } from "#shared/domain/errors";
import { ID_PATTERN } from "#shared/domain/ids";
import { hubInUseError } from "#shared/domain/hubs/errors";
import { type Hub, type HubReferenceCounts, type HubReferenceKind, hubReferenceKinds, hubSchema } from "#shared/domain/hubs/schema";
import { DELETE_FENCE_ATTRIBUTE } from "#shared/store/delete-fence";
import { liftParentFence, setParentFence } from "#shared/store/parent-fence";
import { legacyCounterAttribute, markerPrefix } from "#shared/store/hub-references";
import { transactLabelled, waitOutLeases } from "#shared/store/transactions";
import type { HubStore, StoredHub } from "#shared/domain/hubs/service";
import { documentClient, isConditionalCheckFailed, tableName, type TransactItem } from "#shared/store/dynamo";
import { contentionExhausted } from "#shared/store/contention-retry";
import {
  type CustomMeaning,
  type CustomValueItems,
  customAttributes,
  customValueFailure,
  customValueItems,
  parseCustomAttributes,
} from "#shared/store/extension-store";
import { concurrentUpdateError, insertItem, updateSettingFields } from "#shared/store/items";
import { keys } from "#shared/store/keys";
import { queryPage, queryPageAcross } from "#shared/store/pagination";

/**
 * Hubs. What names a hub (vehicles, visits, configuration profiles) keeps its own reference item in
 * the hub's partition (shared/store/hub-references.ts), never a counter on the hub item, so children
 * of one hub written at once share no item. A child entering a hub confirms it by a parent lease; a
 * hub delete, the rare writer, fences the hub, waits out the leases, then finds any child with one
 * consistent query of the hub's partition (and requires the counts of legacy children to be zero).
 */

/** The hub's attributes: every field of the schema (the parse drops anything else), and its entity. */
function hubItem(hub: Hub): Record<string, unknown> {
  return { ...hubSchema.parse(hub), entity: "hub" };
}

function parseHub(item: Record<string, unknown>): StoredHub {
  return { hub: hubSchema.parse(item), version: Number(item.version ?? 0), custom: parseCustomAttributes(item) };
}

type HubItemMeaning = CustomMeaning | { kind: "hub" };

/**
 * The hub item's write and its custom-value items in one transaction; a failed hub condition is
 * answered by `hubFailed` (after a consistent read), a failed custom-value item by its own error.
 */
async function transactHub(hubWrite: TransactItem, custom: CustomValueItems, hubFailed: () => Promise<Error>): Promise<void> {
  const items: Array<[TransactItem, HubItemMeaning]> = [
    [hubWrite, { kind: "hub" }],
    ...custom.items.map((item, index): [TransactItem, HubItemMeaning] => [item, custom.meanings[index] as CustomMeaning]),
  ];
  const failed = await transactLabelled(items, { leases: custom.leases });
  if (failed === undefined) return;
  if (failed.some((meaning) => meaning.kind === "hub")) throw await hubFailed();
  throw (
    customValueFailure(
      "hub",
      failed.filter((meaning): meaning is CustomMeaning => meaning.kind !== "hub"),
    ) ?? concurrentUpdateError()
  );
}

async function readHubItem(organizationId: string, hubId: string, consistent = true): Promise<Record<string, unknown> | undefined> {
  const output = await documentClient().send(
    new GetCommand({ TableName: tableName(), Key: keys.hub(organizationId, hubId), ConsistentRead: consistent }),
  );
  return output.Item;
}

/** The item returned with a failed condition arrives marshalled (`{ N: "2" }`): lib-dynamodb does not convert errors. */
function numberAttribute(value: unknown): number {
  if (typeof value === "object" && value !== null && "N" in value) return Number((value as { N: string }).N);
  return Number(value ?? 0);
}

/** Counts of legacy children (written before reference items) kept on the hub item. */
function legacyCounts(item: Record<string, unknown>): HubReferenceCounts {
  return Object.fromEntries(
    hubReferenceKinds.map((kind) => [kind, numberAttribute(item[legacyCounterAttribute[kind]])]),
  ) as HubReferenceCounts;
}

/** How many items of one kind the hub's partition holds (consistent COUNT queries; a hub delete only). */
async function countChildren(organizationId: string, hubId: string, kind: HubReferenceKind): Promise<number> {
  let count = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const output = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues: { ":pk": keys.hubPartition(organizationId, hubId), ":prefix": markerPrefix[kind] ?? keys.visitPrefix },
        Select: "COUNT",
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    count += output.Count ?? 0;
    startKey = output.LastEvaluatedKey;
  } while (startKey);
  return count;
}

/** Whether anything names the hub: one consistent query of its partition, `Limit 1`. */
async function hasChildren(organizationId: string, hubId: string): Promise<boolean> {
  const output = await documentClient().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: "PK = :pk",
      ExpressionAttributeValues: { ":pk": keys.hubPartition(organizationId, hubId) },
      ConsistentRead: true,
      Limit: 1,
      ProjectionExpression: "PK",
    }),
  );
  return (output.Items?.length ?? 0) > 0;
}

/** Sets the hub's fence if it is still at `expectedVersion` and not fenced; undefined when it lost. */
function setHubFence(organizationId: string, hubId: string, expectedVersion: number): Promise<number | undefined> {
  return setParentFence(keys.hub(organizationId, hubId), expectedVersion);
}

function liftHubFence(organizationId: string, hubId: string, fencedAt: number): Promise<void> {
  return liftParentFence(keys.hub(organizationId, hubId), fencedAt);
}

/** 409 naming what still references the hub: its reference items plus legacy counts. */
async function inUse(organizationId: string, hubId: string): Promise<Error> {
  const item = (await readHubItem(organizationId, hubId)) ?? {};
  const legacy = legacyCounts(item);
  const entries = await Promise.all(
    hubReferenceKinds.map(async (kind) => [kind, legacy[kind] + (await countChildren(organizationId, hubId, kind))] as const),
  );
  return hubInUseError(Object.fromEntries(entries) as HubReferenceCounts);
}

/** A single-item write that met an in-flight transaction on the same item: retryable, 409. */
function isTransactionConflict(error: unknown): boolean {
  return error instanceof Error && error.name === "TransactionConflictException";
}

export const dynamoHubStore: HubStore = {
  async insert(hub, custom) {
    const key = keys.hub(hub.organizationId, hub._id);
    if (!custom) {
      // Ids are fresh ObjectIds; a collision means something is badly wrong, not a client mistake.
      if (!(await insertItem(key, hubItem(hub)))) throw concurrentUpdateError();
      return;
    }
    await transactHub(
      {
        Put: {
          TableName: tableName(),
          Item: { ...hubItem(hub), ...customAttributes(custom.next), ...key, version: 1 },
          ConditionExpression: "attribute_not_exists(PK)",
        },
      },
      customValueItems(hub.organizationId, hub._id, undefined, custom),
      async () => concurrentUpdateError(),
    );
  },

  async find(organizationId, hubId, options) {
    const item = await readHubItem(organizationId, hubId, options?.consistent ?? true);
    return item && parseHub(item);
  },

  /**
   * SET of the hub's own fields (every field of `hubSchema`, so a field added to the schema is written
   * with no second list to keep) and never the rest of the item: the legacy counters and the delete
   * fence belong to other writers. New custom values are SET in the same update, inside one
   * transaction with their uniqueness claims.
   */
  async update(hub, previous, custom) {
    const expectedVersion = previous.version;
    const fields: Record<string, unknown> = {
      ...hubItem(hub),
      version: expectedVersion + 1,
      ...(custom ? { custom: customAttributes(custom.next).custom, customIndex: customAttributes(custom.next).customIndex } : {}),
    };
    const update = {
      TableName: tableName(),
      Key: keys.hub(hub.organizationId, hub._id),
      ConditionExpression: "#version = :expected",
      ...updateSettingFields(fields),
    };
    update.ExpressionAttributeValues[":expected"] = expectedVersion;
    if (custom) {
      await transactHub({ Update: update }, customValueItems(hub.organizationId, hub._id, previous.custom, custom), async () =>
        (await readHubItem(hub.organizationId, hub._id)) ? concurrentUpdateError() : new NotFoundError(),
      );
      return;
    }
    try {
      await documentClient().send(new UpdateCommand({ ...update, ReturnValuesOnConditionCheckFailure: "ALL_OLD" }));
    } catch (error) {
      if (isTransactionConflict(error)) throw contentionExhausted("conflict");
      if (!isConditionalCheckFailed(error)) throw error;
      throw (error as { Item?: unknown }).Item ? concurrentUpdateError() : new NotFoundError();
    }
  },

  /**
   * The rare writer of the hub references: fence the hub, wait out the leases of children entering
   * it, look for any child (one consistent query of the hub's partition) and legacy counts, then
   * delete the hub (and release its custom values' claims) conditional on our fence; or lift the
   * fence and answer 409 with what still names the hub.
   */
  async remove(organizationId, hubId, previous) {
    const fencedAt = await setHubFence(organizationId, hubId, previous.version);
    if (fencedAt === undefined) throw (await readHubItem(organizationId, hubId)) ? concurrentUpdateError() : new NotFoundError();
    await waitOutLeases();
    const unusedLegacy = Object.values(legacyCounterAttribute)
      .map((attribute) => `(attribute_not_exists(${attribute}) OR ${attribute} = :zero)`)
      .join(" AND ");
    try {
      if (await hasChildren(organizationId, hubId)) throw await inUse(organizationId, hubId);
      const custom = customValueItems(
        organizationId,
        hubId,
        previous.custom,
        previous.custom && previous.custom.guards.length > 0 ? "delete" : undefined,
      );
      const failed = await transactLabelled<HubItemMeaning>([
        [
          {
            Delete: {
              TableName: tableName(),
              Key: keys.hub(organizationId, hubId),
              ConditionExpression: `version = :expected AND #fence = :fencedAt AND ${unusedLegacy}`,
              ExpressionAttributeNames: { "#fence": DELETE_FENCE_ATTRIBUTE },
              ExpressionAttributeValues: { ":expected": previous.version, ":fencedAt": fencedAt, ":zero": 0 },
            },
          },
          { kind: "hub" },
        ],
        ...custom.items.map((item, index): [TransactItem, HubItemMeaning] => [item, custom.meanings[index] as CustomMeaning]),
      ]);
      if (failed === undefined) return;
      const item = await readHubItem(organizationId, hubId);
      if (!item) throw new NotFoundError();
      throw Object.values(legacyCounts(item)).some((count) => count > 0) ? await inUse(organizationId, hubId) : concurrentUpdateError();
    } catch (error) {
      await liftHubFence(organizationId, hubId, fencedAt);
      throw error;
    }
  },

  async list(organizationId, filter) {
    // A hub-limited token reads its own hubs' keys instead of filtering the organization's hubs, so
    // no page is empty in front of them. Hub ids are fixed-length, so the `HUB#<id>` range holds
    // exactly that hub; a token id of another shape names no hub and is not read (it could be a prefix).
    const allowed = [...new Set(filter.allowedHubIds)].filter((hubId) => ID_PATTERN.test(hubId));
    const page =
      filter.allowedHubIds.length > 0
        ? await queryPageAcross<Record<string, unknown>>(
            allowed.map((hubId) => ({
              partition: keys.organizationPartition(organizationId),
              sortKeyPrefix: keys.hub(organizationId, hubId).SK,
            })),
            filter.limit,
            filter.cursor,
          )
        : await queryPage<Record<string, unknown>>({
            partition: keys.organizationPartition(organizationId),
            sortKeyPrefix: keys.hubPrefix,
            limit: filter.limit,
            cursor: filter.cursor,
          });
    return { items: page.items.map(parseHub), nextCursor: page.nextCursor };
  },
};
