import { BatchGetCommand, GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { NotFoundError, ValidationError } from "#shared/domain/errors";
import { recordErrors } from "#shared/domain/records/errors";
import { type GuardEntry, hubScopeOf, type LinkEntry, type StoredRecord } from "#shared/domain/records/schema";
import type { RecordLocation, RecordStore, VersionedRecord, WriteContext } from "#shared/domain/records/service";
import { type GuardOwner, guardMoves } from "#shared/store/record-guards";
import { documentClient, tableName, type TransactItem } from "#shared/store/dynamo";
import { dataTypeLease, hubLease } from "#shared/store/parent-leases";
import { type Lease, put, remove, transactLabelled } from "#shared/store/transactions";
import { concurrentUpdateError } from "#shared/store/items";
import { type ItemKey, keyPart, keys } from "#shared/store/keys";
import {
  type CapacityRecorder,
  hubScopeFilter,
  organizationHubScopeFilter,
  organizationRecordPage,
  recordListPage,
  searchTokenPage,
  type TokenHit,
} from "#shared/store/record-search";
import {
  deleteOldTokens,
  deleteStaleHits,
  hitHolds,
  REPAIR_GRACE_MS,
  repairMarkerItem,
  pendingRepairs,
  repairRecords,
  SEARCH_LAYOUT,
  undoCreatedTokens,
  writeNewTokens,
} from "#shared/store/record-tokens";

/**
 * Records over DynamoDB (layout in docs/api/records.md and shared/store/keys.ts):
 * - record `ORG#o#DT#<type> / REC#<hub or *>#<dataId>` (entity `record`, `version`,
 *   GSI1 = `ORG#o#RECORDS / <_id>` for GET /data without a type, newest first,
 *   GSI2 = `ORG#o#DATAID#<dataId> / <type>#<hub or *>` for GET /data/{dataId});
 * - ref `ORG#o#REC#<_id> / REF` → type, hub scope, dataId (relation targets, consistent);
 * - unique guards `ORG#o#DT#<type>#UQ / <field or +a+b>#<scope>#<value>` carrying `recordId`;
 * - search tokens `ORG#o#TOK#<first char> / <token>#<type>#<hub or *>#<dataId>` carrying `recordId`,
 *   written outside the transaction (shared/store/record-tokens.ts: before it, and deleted after it);
 * - relation links `ORG#o#REL#<target _id> / <type>#<field>#<_id>`.
 * Every write is ONE TransactWriteItems over the record and exactly the guards/links its
 * `index` lists (old ones removed, new ones added), and a search repair marker when its token writes
 * failed: items of this record only, so records of one
 * type written at once never name a common item. The data type (same version, no fence) and a hub
 * the record enters are confirmed by parent leases (shared/store/parent-leases.ts), not named in
 * the transaction (docs/architecture.md, "Writes without shared items"). Failures are decoded by label.
 */

/** What a transaction item's failed condition means. */
type Meaning = { kind: "record" } | { kind: "previous" } | { kind: "guard"; name: string } | { kind: "other" };

export const MAX_TRANSACTION_ITEMS = 100;
/** Records a search re-indexes before answering (more wait for the next search). */
const MAX_REPAIRS_PER_SEARCH = 10;

const recordKey = (record: Pick<StoredRecord, "organizationId" | "dataTypeId" | "hubId" | "dataId">) =>
  keys.record(record.organizationId, record.dataTypeId, hubScopeOf(record), record.dataId);

function recordItem(record: StoredRecord, version: number): Record<string, unknown> {
  const scope = hubScopeOf(record);
  return {
    ...record,
    index: { ...record.index, searchLayout: SEARCH_LAYOUT },
    ...recordKey(record),
    entity: "record",
    version,
    hubScope: scope,
    GSI1PK: keys.organizationRecordsPartition(record.organizationId),
    GSI1SK: record._id,
    GSI2PK: keys.recordsByDataId(record.organizationId, record.dataId),
    GSI2SK: keys.recordsByDataIdSortKey(record.dataTypeId, scope),
  };
}

function parseRecord(item: Record<string, unknown>): VersionedRecord {
  const record: StoredRecord = {
    _id: item._id as string,
    dataId: item.dataId as string,
    dataTypeId: item.dataTypeId as string,
    hubId: (item.hubId as string | null | undefined) ?? null,
    values: (item.values as Record<string, unknown> | undefined) ?? {},
    index: {
      guards: ((item.index as StoredRecord["index"] | undefined)?.guards ?? []) as GuardEntry[],
      tokens: ((item.index as StoredRecord["index"] | undefined)?.tokens ?? []) as string[],
      links: ((item.index as StoredRecord["index"] | undefined)?.links ?? []) as LinkEntry[],
      searchLayout: (item.index as StoredRecord["index"] | undefined)?.searchLayout,
    },
    organizationId: item.organizationId as string,
    createdBy: item.createdBy as string,
    updatedBy: (item.updatedBy as string | undefined) ?? (item.createdBy as string),
    createdTime: item.createdTime as string,
    updatedTime: item.updatedTime as string,
  };
  return { record, version: Number(item.version ?? 0) };
}

const linkId = (link: LinkEntry) => `${link.fieldId}\u0000${link.targetId}`;

/** The parents a write depends on: its type at the validated version, and a hub it enters (records do not pin hubs). */
const leasesOf = (record: StoredRecord, context: WriteContext): Lease[] => [
  dataTypeLease(record.organizationId, record.dataTypeId, context.dataTypeVersion),
  ...(context.hubToCheck !== undefined ? [hubLease(record.organizationId, context.hubToCheck)] : []),
];

function refItem(record: StoredRecord): Record<string, unknown> {
  return {
    ...keys.recordRef(record.organizationId, record._id),
    entity: "recordRef",
    recordId: record._id,
    dataTypeId: record.dataTypeId,
    hubScope: hubScopeOf(record),
    dataId: record.dataId,
  };
}

const guardOwnerOf = (record: StoredRecord | undefined): GuardOwner | undefined =>
  record && { organizationId: record.organizationId, dataTypeId: record.dataTypeId, ownerId: record._id, guards: record.index.guards };
const linkKey = (record: StoredRecord, link: LinkEntry) =>
  keys.relationLink(record.organizationId, link.targetId, record.dataTypeId, link.fieldId, record._id);

/** The guard and link items to add and remove between two versions of a record (either may be absent). */
function indexChanges(previous: StoredRecord | undefined, next: StoredRecord | undefined): Array<[TransactItem, Meaning]> {
  const items: Array<[TransactItem, Meaning]> = [];
  const recordId = (next ?? previous)?._id ?? "";
  items.push(...guardMoves(guardOwnerOf(previous), guardOwnerOf(next)));

  const oldLinks = new Map((previous?.index.links ?? []).map((link) => [linkId(link), link]));
  const newLinks = new Map((next?.index.links ?? []).map((link) => [linkId(link), link]));
  for (const [id, link] of oldLinks) if (!newLinks.has(id) && previous) items.push([remove(linkKey(previous, link)), { kind: "other" }]);
  for (const [id, link] of newLinks) {
    if (!oldLinks.has(id) && next)
      items.push([
        put({ ...linkKey(next, link), entity: "relationLink", recordId, fieldId: link.fieldId, dataTypeId: next.dataTypeId }),
        { kind: "other" },
      ]);
  }
  return items;
}

async function transact(
  items: Array<[TransactItem, Meaning]>,
  context: { record: StoredRecord; commonData: boolean; previousKey?: ItemKey; leases?: Lease[] },
): Promise<void> {
  if (items.length > MAX_TRANSACTION_ITEMS) {
    throw ValidationError.single(
      "body",
      `this change needs ${items.length} writes in one transaction (the record, its unique values and relation links); at most ${MAX_TRANSACTION_ITEMS}: change fewer relation ids at once`,
    );
  }
  const failed = await transactLabelled(items, { leases: context.leases });
  if (failed === undefined) return;
  const kinds = new Set(failed.map((meaning) => meaning.kind));
  if (kinds.has("previous")) {
    const output = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: context.previousKey, ConsistentRead: true, ProjectionExpression: "PK" }),
    );
    throw output.Item ? concurrentUpdateError() : new NotFoundError();
  }
  if (kinds.has("record")) throw recordErrors.dataIdTaken(context.record.dataId, context.commonData);
  const guards = failed.flatMap((meaning) => (meaning.kind === "guard" ? meaning.name.replace(/^\+/, "").split("+") : []));
  if (guards.length > 0) throw recordErrors.valuesTaken([...new Set(guards)]);
  // A stale index item (removed meanwhile by another write of this record): retryable.
  throw concurrentUpdateError();
}

async function findByKey(key: ItemKey): Promise<VersionedRecord | undefined> {
  const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  return output.Item ? parseRecord(output.Item) : undefined;
}

/** Records by key, in one BatchGet per 100 keys (unprocessed keys retried a few times). */
async function batchGetRecords(keyList: ItemKey[], recorder?: CapacityRecorder): Promise<Map<string, StoredRecord>> {
  const found = new Map<string, StoredRecord>();
  const unique = [...new Map(keyList.map((key) => [`${key.PK}\u0000${key.SK}`, key])).values()];
  for (let start = 0; start < unique.length; start += 100) {
    let pending: Record<string, unknown>[] | undefined = unique.slice(start, start + 100) as unknown as Record<string, unknown>[];
    for (let attempt = 0; pending && pending.length > 0 && attempt < 5; attempt += 1) {
      const output = await documentClient().send(
        new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: pending } }, ReturnConsumedCapacity: recorder ? "TOTAL" : undefined }),
      );
      for (const capacity of output.ConsumedCapacity ?? []) recorder?.("BatchGetItem", capacity.CapacityUnits ?? 0);
      for (const item of output.Responses?.[tableName()] ?? []) {
        const { record } = parseRecord(item);
        found.set(record._id, record);
      }
      pending = output.UnprocessedKeys?.[tableName()]?.Keys as Record<string, unknown>[] | undefined;
    }
  }
  return found;
}

export function createDynamoRecordStore(
  options: { recorder?: CapacityRecorder; now?: () => number; repairGraceMs?: number } = {},
): RecordStore {
  const recorder = options.recorder;
  const now = options.now ?? Date.now;
  const graceMs = options.repairGraceMs ?? REPAIR_GRACE_MS;
  /**
   * A search page's records, read in one batch, in the page's order. A hit that does not answer for
   * the record at its key (gone, another record, a version without the word) is left out and, once
   * older than the grace, deleted (shared/store/record-tokens.ts).
   */
  async function recordsOfHits(organizationId: string, hits: TokenHit[]) {
    const records = await batchGetRecords(
      hits.map((hit) => keys.record(organizationId, hit.dataTypeId, hit.hubScope, hit.dataId)),
      recorder,
    );
    const held: Array<{ token: string; record: StoredRecord }> = [];
    const stale: TokenHit[] = [];
    for (const hit of hits) {
      const record = records.get(hit.recordId);
      if (hitHolds(hit, record)) held.push({ token: hit.token, record });
      else stale.push(hit);
    }
    if (stale.length > 0) await deleteStaleHits(organizationId, stale, now(), graceMs);
    return held;
  }
  /**
   * A write's token items around its transaction: new ones first (a failure adds the repair marker
   * to `items`), the transaction (a refused create: its tokens deleted again), then the old ones deleted.
   */
  async function withTokens(
    next: StoredRecord | undefined,
    previous: StoredRecord | undefined,
    version: number,
    items: Array<[TransactItem, Meaning]>,
    commit: () => Promise<void>,
  ) {
    if (next && !(await writeNewTokens(next, previous, version, now())))
      items.push([put(repairMarkerItem(next, version)), { kind: "other" }]);
    try {
      await commit();
    } catch (error) {
      // A refused create (a 409, contention) takes its tokens back; see undoCreatedTokens for replaces.
      if (next && !previous) await undoCreatedTokens(next);
      throw error;
    }
    if (previous) await deleteOldTokens(previous, next, version);
  }
  /**
   * One search page, after the organization's pending repairs: the marker read runs beside the token
   * read; when it finds records whose token writes failed, they are re-indexed and the tokens read again.
   */
  async function searchPage(organizationId: string, read: () => ReturnType<typeof searchTokenPage>) {
    const [markers, first] = await Promise.all([
      pendingRepairs(organizationId, MAX_REPAIRS_PER_SEARCH, recorder && ((units) => recorder("Query", units))),
      read(),
    ]);
    let page = first;
    if (markers.length > 0) {
      await repairRecords(organizationId, markers, { now: now(), parse: parseRecord });
      page = await read();
    }
    return { hits: await recordsOfHits(organizationId, page.hits), nextCursor: page.nextCursor };
  }
  return {
    find: (organizationId, location) => findByKey(keys.record(organizationId, location.dataTypeId, location.hubScope, location.dataId)),

    async findById(organizationId, recordId) {
      const ref = await documentClient().send(
        new GetCommand({ TableName: tableName(), Key: keys.recordRef(organizationId, recordId), ConsistentRead: true }),
      );
      if (!ref.Item) return undefined;
      const found = await findByKey(
        keys.record(organizationId, ref.Item.dataTypeId as string, ref.Item.hubScope as string, ref.Item.dataId as string),
      );
      return found?.record._id === recordId ? found : undefined;
    },

    async locate(organizationId, dataId): Promise<RecordLocation[]> {
      const output = await documentClient().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: "GSI2",
          KeyConditionExpression: "GSI2PK = :pk",
          ExpressionAttributeValues: { ":pk": keys.recordsByDataId(organizationId, dataId) },
          ProjectionExpression: "dataTypeId, hubScope, dataId",
          Limit: 50,
        }),
      );
      return (output.Items ?? []).map((item) => ({
        dataTypeId: item.dataTypeId as string,
        hubScope: item.hubScope as string,
        dataId: item.dataId as string,
      }));
    },

    async create(record, context) {
      const items: Array<[TransactItem, Meaning]> = [
        [put(recordItem(record, 1), { ConditionExpression: "attribute_not_exists(PK)" }), { kind: "record" }],
      ];
      items.push([put(refItem(record), { ConditionExpression: "attribute_not_exists(PK)" }), { kind: "other" }]);
      items.push(...indexChanges(undefined, record));
      await withTokens(record, undefined, 1, items, () =>
        transact(items, { record, commonData: context.commonData, leases: leasesOf(record, context) }),
      );
    },

    async replace(next, previous, context: WriteContext & { commonData: boolean }) {
      const oldKey = recordKey(previous.record);
      const newKey = recordKey(next);
      const keyChanged = oldKey.SK !== newKey.SK;
      const versionCondition = { ConditionExpression: "version = :expected", ExpressionAttributeValues: { ":expected": previous.version } };
      const items: Array<[TransactItem, Meaning]> = keyChanged
        ? [
            [remove(oldKey, versionCondition), { kind: "previous" }],
            [put(recordItem(next, previous.version + 1), { ConditionExpression: "attribute_not_exists(PK)" }), { kind: "record" }],
            [put(refItem(next)), { kind: "other" }],
          ]
        : [[put(recordItem(next, previous.version + 1), versionCondition), { kind: "previous" }]];
      items.push(...indexChanges(previous.record, next));
      await withTokens(next, previous.record, previous.version + 1, items, () =>
        transact(items, { record: next, commonData: context.commonData, previousKey: oldKey, leases: leasesOf(next, context) }),
      );
    },

    async remove(previous) {
      const record = previous.record;
      const key = recordKey(record);
      const items: Array<[TransactItem, Meaning]> = [
        [
          remove(key, { ConditionExpression: "version = :expected", ExpressionAttributeValues: { ":expected": previous.version } }),
          { kind: "previous" },
        ],
        [remove(keys.recordRef(record.organizationId, record._id)), { kind: "other" }],
        ...indexChanges(record, undefined),
      ];
      await withTokens(undefined, record, previous.version + 1, items, () =>
        transact(items, { record, commonData: record.hubId === null, previousKey: key }),
      );
    },

    async list(organizationId, dataTypeId, filter) {
      const page = await recordListPage({
        partition: keys.recordPartition(organizationId, dataTypeId),
        prefix: filter.hubScope !== undefined ? keys.record(organizationId, dataTypeId, filter.hubScope, "").SK : "REC#",
        hubPrefix: (hubScope) => keys.record(organizationId, dataTypeId, hubScope, "").SK,
        allowedHubScopes: filter.hubScope === undefined ? filter.allowedHubScopes : undefined,
        limit: filter.limit,
        cursor: filter.cursor,
        recorder,
      });
      return { items: page.items.map((item) => parseRecord(item).record), nextCursor: page.nextCursor };
    },

    async search(organizationId, dataTypeId, filter) {
      return searchPage(organizationId, () =>
        searchTokenPage({
          partition: keys.organizationTokenPartition(organizationId, filter.indexWord),
          prefix: keyPart(filter.indexWord),
          dataTypeId,
          filter: hubScopeFilter(filter.hubScope, filter.allowedHubScopes),
          limit: filter.limit,
          cursor: filter.cursor,
          recorder,
        }),
      );
    },

    async listOrganization(organizationId, filter) {
      const page = await organizationRecordPage({
        partition: keys.organizationRecordsPartition(organizationId),
        hubScopes: filter.hubScopes,
        limit: filter.limit,
        cursor: filter.cursor,
        recorder,
      });
      return { items: page.items.map((item) => parseRecord(item).record), nextCursor: page.nextCursor };
    },

    async searchOrganization(organizationId, filter) {
      return searchPage(organizationId, () =>
        searchTokenPage({
          partition: keys.organizationTokenPartition(organizationId, filter.indexWord),
          prefix: keyPart(filter.indexWord),
          filter: organizationHubScopeFilter(filter.hubScopes),
          limit: filter.limit,
          cursor: filter.cursor,
          recorder,
        }),
      );
    },

    async linkedIds(organizationId, targetRecordId, sourceDataTypeId, fieldId, limit) {
      const output = await documentClient().send(
        new QueryCommand({
          TableName: tableName(),
          KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
          ExpressionAttributeValues: {
            ":pk": keys.relationLinkPartition(organizationId, targetRecordId),
            ":prefix": keys.relationLinkPrefix(sourceDataTypeId, fieldId),
          },
          ProjectionExpression: "recordId",
          Limit: limit,
        }),
      );
      return (output.Items ?? []).map((item) => item.recordId as string);
    },
  };
}

export const dynamoRecordStore = createDynamoRecordStore();

/**
 * The search layout migration's backfill (docs/operations.md, "Search token layout"): every record of
 * the organization whose tokens are of an earlier layout gets this layout's token items (and loses
 * the old ones), page by page of each data type's records. Idempotent; safe beside live writes (the
 * same conditions as a search's repair).
 */
export async function reindexOrganization(organizationId: string): Promise<{ records: number; reindexed: number; failed: number }> {
  const totals = { records: 0, reindexed: 0, failed: 0 };
  const types = await documentClient().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.organizationPartition(organizationId), ":prefix": keys.dataTypePrefix },
      ProjectionExpression: "SK",
      ConsistentRead: true,
    }),
  );
  for (const type of types.Items ?? []) {
    const dataTypeId = (type.SK as string).slice(keys.dataTypePrefix.length);
    let cursor: string | undefined;
    do {
      const page = await recordListPage({
        partition: keys.recordPartition(organizationId, dataTypeId),
        prefix: "REC#",
        hubPrefix: (hubScope) => keys.record(organizationId, dataTypeId, hubScope, "").SK,
        limit: 100,
        cursor,
      });
      const legacy = page.items.map((item) => parseRecord(item)).filter(({ record }) => record.index.searchLayout !== SEARCH_LAYOUT);
      totals.records += page.items.length;
      const outcome = await repairRecords(
        organizationId,
        legacy.map(({ record, version }) => repairMarkerItem(record, version)),
        { now: Date.now(), parse: parseRecord },
      );
      totals.reindexed += outcome.reindexed;
      totals.failed += outcome.failed;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }
  return totals;
}
