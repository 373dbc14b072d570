import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { hubScopeOf, type StoredRecord } from "#shared/domain/records/schema";
import { documentClient, tableName } from "#shared/store/dynamo";
import { type ItemKey, keys } from "#shared/store/keys";
import type { TokenHit } from "#shared/store/record-search";

/**
 * Search token items, written OUTSIDE the record's transaction (one plain conditional write each,
 * 1 WRU, instead of a transactional put and a GSI1 entry, 3 WRU). How search stays consistent:
 * - New tokens are written BEFORE the record's transaction, removed ones deleted AFTER it. A token
 *   whose record is missing, another record, or a version without that word (a failed write, a
 *   delete whose token deletes failed) is never answered: the search checks every hit against the
 *   record it reads anyway, and deletes such a token once it is older than REPAIR_GRACE_MS (a younger
 *   one may belong to a write whose transaction is still under way).
 * - A token write that fails (throttled past the SDK's retries, or a token of the same key still
 *   held by another record) puts a repair marker into the record's own transaction (in the
 *   organization's marker partition), so a record is never committed without either its tokens or
 *   the marker. Every `q` reads that partition beside the tokens (0.5 RRU when empty) and, when it
 *   holds markers, re-indexes those records (`repairRecords`) before it reads the tokens.
 * - Conditions keep concurrent writers of one record from undoing each other: a token is
 *   overwritten only by its record at a version not older, and deleted only by a write of its
 *   record at a version not older than the token's.
 */

export const SEARCH_LAYOUT = 2;
/** A token this young may belong to a write still under way: not deleted as stale yet. */
export const REPAIR_GRACE_MS = 5 * 60_000;
/** At most this many token writes of one record at once (a record has at most 20 tokens). */
const TOKEN_WRITE_CONCURRENCY = 20;

const tokenKey = (record: StoredRecord, token: string): ItemKey =>
  keys.searchToken(record.organizationId, token, record.dataTypeId, hubScopeOf(record), record.dataId);

const keyId = (key: ItemKey) => `${key.PK}\u0000${key.SK}`;

/**
 * The token items' keys of a version of a record: a stored one (`written`: none of this layout when
 * written before it) or the one being written now (always this layout).
 */
function currentKeys(record: StoredRecord | undefined, written = true): Map<string, { key: ItemKey; token: string }> {
  if (!record || (written && record.index.searchLayout !== SEARCH_LAYOUT)) return new Map();
  return new Map(
    record.index.tokens.map((token) => {
      const key = tokenKey(record, token);
      return [keyId(key), { key, token }];
    }),
  );
}

function tokenItem(record: StoredRecord, token: string, version: number, writtenAt: number): Record<string, unknown> {
  return {
    ...tokenKey(record, token),
    entity: "recordToken",
    recordId: record._id,
    dataTypeId: record.dataTypeId,
    hubScope: hubScopeOf(record),
    dataId: record.dataId,
    version,
    writtenAt,
  };
}

async function settleAll(tasks: Array<() => Promise<unknown>>): Promise<boolean> {
  let ok = true;
  for (let start = 0; start < tasks.length; start += TOKEN_WRITE_CONCURRENCY) {
    const results = await Promise.allSettled(tasks.slice(start, start + TOKEN_WRITE_CONCURRENCY).map((task) => task()));
    if (results.some((result) => result.status === "rejected")) ok = false;
  }
  return ok;
}

/**
 * Before the transaction: the token items `next` (at `version`) has and `previous` has not. False
 * when one failed: the caller then adds `repairMarkerItem` to its transaction.
 */
export async function writeNewTokens(
  next: StoredRecord,
  previous: StoredRecord | undefined,
  version: number,
  now: number,
): Promise<boolean> {
  const held = currentKeys(previous);
  const tokens = next.index.tokens.filter((token) => !held.has(keyId(tokenKey(next, token))));
  return settleAll(
    tokens.map(
      (token) => () =>
        documentClient().send(
          new PutCommand({
            TableName: tableName(),
            Item: tokenItem(next, token, version, now),
            ConditionExpression: "attribute_not_exists(PK) OR (recordId = :id AND version <= :version)",
            ExpressionAttributeValues: { ":id": next._id, ":version": version },
          }),
        ),
    ),
  );
}

/**
 * After a refused create: the token items `writeNewTokens` put for it, deleted again, so a refused
 * create leaves nothing behind. The record id is new, so every token item of that id is this
 * write's own. (A refused replace keeps its new tokens: a concurrent replace at the same version
 * may hold the same items, and a token whose record lacks the word never answers a search, which
 * deletes it after its grace.) A failed delete is left to that same rule.
 */
export async function undoCreatedTokens(record: StoredRecord): Promise<void> {
  await settleAll(
    record.index.tokens.map(
      (token) => () =>
        documentClient().send(
          new DeleteCommand({
            TableName: tableName(),
            Key: tokenKey(record, token),
            ConditionExpression: "recordId = :id",
            ExpressionAttributeValues: { ":id": record._id },
          }),
        ),
    ),
  );
}

/**
 * After the transaction: the token items `previous` had and `next` (absent: deleted) has not, and
 * every token item of the earlier layout. Failures are left to the search's repair.
 */
export async function deleteOldTokens(previous: StoredRecord, next: StoredRecord | undefined, version: number): Promise<void> {
  const kept = currentKeys(next, false);
  const stale = [...currentKeys(previous).values()].filter(({ key }) => !kept.has(keyId(key)));
  const legacy =
    previous.index.searchLayout === SEARCH_LAYOUT
      ? []
      : previous.index.tokens.map((token) => keys.legacyRecordToken(previous.organizationId, previous.dataTypeId, token, previous._id));
  await settleAll([
    ...stale.map(
      ({ key }) =>
        () =>
          documentClient().send(
            new DeleteCommand({
              TableName: tableName(),
              Key: key,
              ConditionExpression: "recordId = :id AND version <= :version",
              ExpressionAttributeValues: { ":id": previous._id, ":version": version },
            }),
          ),
    ),
    ...legacy.map((key) => () => documentClient().send(new DeleteCommand({ TableName: tableName(), Key: key }))),
  ]);
}

/** The marker a record's transaction carries when its token writes failed. */
export function repairMarkerItem(record: StoredRecord, version: number): Record<string, unknown> {
  return {
    ...keys.searchRepairMarker(record.organizationId, record._id),
    entity: "searchRepair",
    recordId: record._id,
    dataTypeId: record.dataTypeId,
    hubScope: hubScopeOf(record),
    dataId: record.dataId,
    version,
  };
}

/** Whether a hit answers for a record: the same record, at the hit's key, holding that word. */
export const hitHolds = (hit: TokenHit, record: StoredRecord | undefined): record is StoredRecord =>
  record !== undefined &&
  record._id === hit.recordId &&
  record.dataTypeId === hit.dataTypeId &&
  hubScopeOf(record) === hit.hubScope &&
  record.dataId === hit.dataId &&
  record.index.tokens.includes(hit.token);

/** Deletes hits that do not hold (hitHolds) if older than the grace and unchanged since read. Never fails the search. */
export async function deleteStaleHits(organizationId: string, stale: TokenHit[], now: number, graceMs: number): Promise<void> {
  await settleAll(
    stale
      .filter((hit) => hit.writtenAt < now - graceMs)
      .map(
        (hit) => () =>
          documentClient().send(
            new DeleteCommand({
              TableName: tableName(),
              Key: keys.searchToken(organizationId, hit.token, hit.dataTypeId, hit.hubScope, hit.dataId),
              ConditionExpression: "recordId = :id AND writtenAt = :writtenAt",
              ExpressionAttributeValues: { ":id": hit.recordId, ":writtenAt": hit.writtenAt },
            }),
          ),
      ),
  );
}

export interface RepairOutcome {
  /** Records whose token items were written again. */
  reindexed: number;
  /** Markers of records that no longer exist (dropped). */
  dropped: number;
  /** Markers left for the next search (a token write failed again). */
  failed: number;
}

/** The organization's repair markers, at most `limit` (one eventually consistent read: 0.5 RRU when there are none). */
export async function pendingRepairs(
  organizationId: string,
  limit: number,
  onCapacity?: (units: number) => void,
): Promise<Record<string, unknown>[]> {
  const output = await documentClient().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: "PK = :pk",
      ExpressionAttributeValues: { ":pk": keys.searchRepairMarker(organizationId, "").PK },
      Limit: limit,
      ReturnConsumedCapacity: onCapacity ? "TOTAL" : undefined,
    }),
  );
  onCapacity?.(output.ConsumedCapacity?.CapacityUnits ?? 0);
  return output.Items ?? [];
}

/**
 * The repair: re-indexes the marked records (a consistent read of each, all its token items
 * written, old-layout ones deleted), then drops each marker unless a newer write replaced it. A
 * token another record wrote for the same key is overwritten only when older than the grace.
 */
export async function repairRecords(
  organizationId: string,
  markers: Record<string, unknown>[],
  options: { now: number; parse: (item: Record<string, unknown>) => { record: StoredRecord; version: number } },
): Promise<RepairOutcome> {
  const { now } = options;
  const outcome: RepairOutcome = { reindexed: 0, dropped: 0, failed: 0 };
  for (const marker of markers) {
    const markerKey = keys.searchRepairMarker(organizationId, marker.recordId as string);
    const found = await documentClient().send(
      new GetCommand({
        TableName: tableName(),
        Key: keys.record(organizationId, marker.dataTypeId as string, marker.hubScope as string, marker.dataId as string),
        ConsistentRead: true,
      }),
    );
    const current = found.Item ? options.parse(found.Item) : undefined;
    let ok = true;
    if (current && current.record._id === marker.recordId) {
      const { record, version } = current;
      ok = await settleAll(
        record.index.tokens.map(
          (token) => () =>
            documentClient().send(
              new PutCommand({
                TableName: tableName(),
                Item: tokenItem(record, token, version, now),
                ConditionExpression:
                  "attribute_not_exists(PK) OR (recordId = :id AND version <= :version) OR (recordId <> :id AND writtenAt < :old)",
                ExpressionAttributeValues: { ":id": record._id, ":version": version, ":old": now - REPAIR_GRACE_MS },
              }),
            ),
        ),
      );
      if (ok && record.index.searchLayout !== SEARCH_LAYOUT) await deleteOldTokens(record, undefined, 0);
      if (ok) outcome.reindexed += 1;
    } else outcome.dropped += 1;
    if (!ok) {
      outcome.failed += 1;
      continue;
    }
    // A write that failed its tokens again meanwhile put a newer marker: that one stays.
    await documentClient()
      .send(
        new DeleteCommand({
          TableName: tableName(),
          Key: markerKey,
          ConditionExpression: "version = :version",
          ExpressionAttributeValues: { ":version": marker.version },
        }),
      )
      .catch(() => undefined);
  }
  return outcome;
}
