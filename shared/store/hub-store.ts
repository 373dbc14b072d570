import { DeleteCommand, GetCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { NotFoundError } from "#shared/domain/errors";
import { ID_PATTERN } from "#shared/domain/ids";
import { hubInUseError, missingHubError } from "#shared/domain/hubs/errors";
import { type Hub, type HubReferenceCounts, type HubReferenceKind, hubReferenceKinds, hubSchema } from "#shared/domain/hubs/schema";
import type { HubStore, StoredHub } from "#shared/domain/hubs/service";
import { documentClient, isConditionalCheckFailed, tableName, type TransactItem, transactionCancellationCodes, transactLabelled } from "#shared/store/dynamo";
import { type CustomMeaning, customAttributes, customValueFailure, customValueItems, parseCustomAttributes } from "#shared/store/extension-store";
import { contentionExhausted } from "#shared/store/contention-retry";
import { concurrentUpdateError, insertItem } from "#shared/store/items";
import { type ItemKey, keys } from "#shared/store/keys";
import { queryPage, queryPageAcross } from "#shared/store/pagination";

/**
 * Hubs, and the reference counts that keep them from being deleted while used.
 *
 * The hub item carries one counter per kind of thing that names it (`vehicleRefs`, `visitRefs`,
 * `configurationRefs`). Every write that adds, moves or removes such a reference updates the
 * counter in the same TransactWriteItems as the entity itself: adding is conditional on the hub
 * existing (so a reference to a missing or concurrently deleted hub fails as a whole), and deleting
 * the hub is conditional on every counter being zero. Either the reference or the deletion wins,
 * never both, and each check is O(1).
 */

const counterAttribute: Record<HubReferenceKind, string> = {
  vehicle: "vehicleRefs",
  visit: "visitRefs",
  configuration: "configurationRefs",
};

function hubItem(hub: Hub): Record<string, unknown> {
  return { ...hub, entity: "hub" };
}

function parseHub(item: Record<string, unknown>): StoredHub {
  return { hub: hubSchema.parse(item), version: Number(item.version ?? 0), custom: parseCustomAttributes(item) };
}

type HubItemMeaning = CustomMeaning | { kind: "hub" };

/**
 * The hub item's write and its custom-value items in one transaction; a failed hub condition is
 * answered by `hubFailed` (after a consistent read), a failed custom-value item by its own error.
 */
async function transactHub(hubWrite: TransactItem, custom: { items: TransactItem[]; meanings: CustomMeaning[] }, hubFailed: () => Promise<Error>): Promise<void> {
  const items: Array<[TransactItem, HubItemMeaning]> = [[hubWrite, { kind: "hub" }], ...custom.items.map((item, index): [TransactItem, HubItemMeaning] => [item, custom.meanings[index] as CustomMeaning])];
  const failed = await transactLabelled(items);
  if (failed === undefined) return;
  if (failed.some((meaning) => meaning.kind === "hub")) throw await hubFailed();
  throw customValueFailure("hub", failed.filter((meaning): meaning is CustomMeaning => meaning.kind !== "hub")) ?? concurrentUpdateError();
}

async function readHubItem(organizationId: string, hubId: string): Promise<Record<string, unknown> | undefined> {
  const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.hub(organizationId, hubId), ConsistentRead: true }));
  return output.Item;
}

/** The item returned with a failed condition arrives marshalled (`{ N: "2" }`): lib-dynamodb does not convert errors. */
function numberAttribute(value: unknown): number {
  if (typeof value === "object" && value !== null && "N" in value) return Number((value as { N: string }).N);
  return Number(value ?? 0);
}

function referenceCounts(item: Record<string, unknown>): HubReferenceCounts {
  return Object.fromEntries(hubReferenceKinds.map((kind) => [kind, numberAttribute(item[counterAttribute[kind]])])) as HubReferenceCounts;
}

function counterUpdate(organizationId: string, hubId: string, kind: HubReferenceKind, delta: 1 | -1): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: keys.hub(organizationId, hubId),
      // attribute_exists: never create a stray hub item by counting on a key that is not a hub.
      ConditionExpression: "attribute_exists(PK)",
      UpdateExpression: "ADD #counter :delta",
      ExpressionAttributeNames: { "#counter": counterAttribute[kind] },
      ExpressionAttributeValues: { ":delta": delta },
    },
  };
}

export interface HubReferenceChange {
  organizationId: string;
  kind: HubReferenceKind;
  /** Hub the entity named before this write (undefined when it is created). */
  from?: string | undefined;
  /** Hub the entity names after this write (undefined when it is deleted). */
  to?: string | undefined;
  /** Field reported when `to` is not a hub (default `hubId`). */
  field?: string;
}

/** Outcome of the entity items: `conditionFailed` lists each entity item's cancellation code, in order. */
export type EntityWriteOutcome = { ok: true } | { ok: false; codes: string[] };

/**
 * Writes `entityItems` and the hub counters of `change` in one transaction.
 * - a missing target hub → 400 naming the field (reported before entity failures);
 * - an entity condition failure → `{ ok: false, codes }` for the caller to map (404/409/400);
 * - a conflicting concurrent transaction → 409 (retry).
 * A hub that is gone when its counter is decremented (data written before hubs were enforced) has
 * nothing left to count, so the write is repeated without that decrement.
 */
export async function writeWithHubReferences(entityItems: TransactItem[], change: HubReferenceChange): Promise<EntityWriteOutcome> {
  const moves = change.from !== change.to;
  const increment = moves && change.to !== undefined ? counterUpdate(change.organizationId, change.to, change.kind, 1) : undefined;
  let decrement = moves && change.from !== undefined ? counterUpdate(change.organizationId, change.from, change.kind, -1) : undefined;
  for (;;) {
    const items = [...entityItems, ...(increment ? [increment] : []), ...(decrement ? [decrement] : [])];
    try {
      await documentClient().send(new TransactWriteCommand({ TransactItems: items }));
      return { ok: true };
    } catch (error) {
      const codes = transactionCancellationCodes(error);
      if (!codes) throw error;
      const entityCodes = codes.slice(0, entityItems.length);
      const incrementCode = increment ? codes[entityItems.length] : undefined;
      const decrementCode = decrement ? codes[entityItems.length + (increment ? 1 : 0)] : undefined;
      // A missing hub first: an entity check that depends on the hub (vehicle in hub) fails with it.
      if (incrementCode === "ConditionalCheckFailed") throw missingHubError(change.field);
      if (entityCodes.includes("ConditionalCheckFailed")) return { ok: false, codes: entityCodes };
      if (codes.includes("TransactionConflict")) throw contentionExhausted("conflict");
      if (decrementCode === "ConditionalCheckFailed") {
        decrement = undefined;
        continue;
      }
      throw error;
    }
  }
}

/** A single-item write that met an in-flight transaction on the same item (e.g. a counter update): retryable, 409. */
function isTransactionConflict(error: unknown): boolean {
  return error instanceof Error && error.name === "TransactionConflictException";
}

/** Transaction item: create the entity; its key must be free. */
export function putNew(key: ItemKey, attributes: Record<string, unknown>): TransactItem {
  return { Put: { TableName: tableName(), Item: { ...attributes, ...key, version: 1 }, ConditionExpression: "attribute_not_exists(PK)" } };
}

/** Transaction item: replace the entity if it still has `expectedVersion`. */
export function putVersioned(key: ItemKey, attributes: Record<string, unknown>, expectedVersion: number): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: { ...attributes, ...key, version: expectedVersion + 1 },
      ConditionExpression: "version = :expected",
      ExpressionAttributeValues: { ":expected": expectedVersion },
    },
  };
}

/** Transaction item: delete the entity if it still has `expectedVersion`. */
export function deleteVersioned(key: ItemKey, expectedVersion: number): TransactItem {
  return {
    Delete: {
      TableName: tableName(),
      Key: key,
      ConditionExpression: "version = :expected",
      ExpressionAttributeValues: { ":expected": expectedVersion },
    },
  };
}

/** After a versioned write lost its condition: 404 when the item is gone, else 409 (changed meanwhile). */
export async function versionConflict(key: ItemKey): Promise<Error> {
  const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true, ProjectionExpression: "PK" }));
  return output.Item ? concurrentUpdateError() : new NotFoundError();
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
      { Put: { TableName: tableName(), Item: { ...hubItem(hub), ...customAttributes(custom.next), ...key, version: 1 }, ConditionExpression: "attribute_not_exists(PK)" } },
      customValueItems(hub.organizationId, hub._id, undefined, custom),
      async () => concurrentUpdateError(),
    );
  },

  async find(organizationId, hubId) {
    const item = await readHubItem(organizationId, hubId);
    return item && parseHub(item);
  },

  /**
   * SET of the writable fields only: the counters belong to the referencing entities' transactions.
   * New custom values are SET in the same update, inside one transaction with their uniqueness claims.
   */
  async update(hub, previous, custom) {
    const expectedVersion = previous.version;
    const update = {
      TableName: tableName(),
      Key: keys.hub(hub.organizationId, hub._id),
      ConditionExpression: "#version = :expected",
      // Every name through a placeholder: several of them are DynamoDB reserved words.
      UpdateExpression: `SET #name = :name, #address = :address, #lat = :lat, #lng = :lng, #timeZone = :timeZone, #updatedTime = :updatedTime, #version = :next${custom ? ", #custom = :custom, #customIndex = :customIndex" : ""}`,
      ExpressionAttributeNames: {
        "#name": "name",
        "#address": "address",
        "#lat": "lat",
        "#lng": "lng",
        "#timeZone": "timeZone",
        "#updatedTime": "updatedTime",
        "#version": "version",
        ...(custom ? { "#custom": "custom", "#customIndex": "customIndex" } : {}),
      },
      ExpressionAttributeValues: {
        ":name": hub.name,
        ":address": hub.address,
        ":lat": hub.lat,
        ":lng": hub.lng,
        ":timeZone": hub.timeZone,
        ":updatedTime": hub.updatedTime,
        ":expected": expectedVersion,
        ":next": expectedVersion + 1,
        ...(custom ? { ":custom": customAttributes(custom.next).custom, ":customIndex": customAttributes(custom.next).customIndex } : {}),
      },
    };
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

  async remove(organizationId, hubId, previous) {
    const expectedVersion = previous.version;
    const unused = Object.values(counterAttribute)
      .map((attribute) => `(attribute_not_exists(${attribute}) OR ${attribute} = :zero)`)
      .join(" AND ");
    if (previous.custom && previous.custom.guards.length > 0) {
      // Its custom values' uniqueness claims are released in the same transaction.
      await transactHub(
        { Delete: { TableName: tableName(), Key: keys.hub(organizationId, hubId), ConditionExpression: `version = :expected AND ${unused}`, ExpressionAttributeValues: { ":expected": expectedVersion, ":zero": 0 } } },
        customValueItems(organizationId, hubId, previous.custom, "delete"),
        async () => {
          const item = await readHubItem(organizationId, hubId);
          if (!item) return new NotFoundError();
          const counts = referenceCounts(item);
          return Object.values(counts).some((count) => count > 0) ? hubInUseError(counts) : concurrentUpdateError();
        },
      );
      return;
    }
    try {
      await documentClient().send(
        new DeleteCommand({
          TableName: tableName(),
          Key: keys.hub(organizationId, hubId),
          ConditionExpression: `version = :expected AND ${unused}`,
          ExpressionAttributeValues: { ":expected": expectedVersion, ":zero": 0 },
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
    } catch (error) {
      if (isTransactionConflict(error)) throw contentionExhausted("conflict");
      if (!isConditionalCheckFailed(error)) throw error;
      const item = (error as { Item?: Record<string, unknown> }).Item;
      if (!item) throw new NotFoundError();
      const counts = referenceCounts(item);
      if (Object.values(counts).some((count) => count > 0)) throw hubInUseError(counts);
      throw concurrentUpdateError();
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
            allowed.map((hubId) => ({ partition: keys.organizationPartition(organizationId), sortKeyPrefix: keys.hub(organizationId, hubId).SK })),
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
