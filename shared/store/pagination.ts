import { createHash } from "node:crypto";
import { QueryCommand, type QueryCommandInput } from "@aws-sdk/lib-dynamodb";
import { ValidationError } from "#shared/domain/errors";
import { documentClient, tableName } from "#shared/store/dynamo";
import { type IndexName, tableDefinition } from "#shared/store/table-definition";

/**
 * Opaque cursors: base64url JSON of DynamoDB's `LastEvaluatedKey`. On decode the key must belong to
 * the partition being queried (which always starts with the caller's organization), so a cursor
 * that was tampered with or taken from another organization or list is a 400, never a leak.
 */
export function encodeCursor(lastEvaluatedKey: Record<string, unknown> | undefined): string | null {
  if (!lastEvaluatedKey) return null;
  return Buffer.from(JSON.stringify(lastEvaluatedKey), "utf8").toString("base64url");
}

/** The attributes a LastEvaluatedKey of a query on the table or on one of its indexes holds. */
function keyAttributesFor(partitionAttribute: string): string[] | undefined {
  const table = [tableDefinition.partitionKey, tableDefinition.sortKey];
  if (partitionAttribute === tableDefinition.partitionKey) return table;
  const index = tableDefinition.globalSecondaryIndexes.find((candidate) => candidate.partitionKey === partitionAttribute);
  return index && [index.partitionKey, index.sortKey, ...table];
}

/** DynamoDB's key size limits: 2,048 bytes for a partition key, 1,024 for a sort key. */
const keyByteLimit = (attribute: string) => (attribute.endsWith("PK") ? 2048 : 1024);

/**
 * The start key a cursor carries, checked to be exactly the key of the queried table or index
 * (every attribute present, a non-empty string within DynamoDB's key limits, nothing else) and to
 * lie in the queried partition. Anything else would reach DynamoDB as an invalid
 * `ExclusiveStartKey` and fail there; it is the client's mistake, so it is a 400 here.
 */
export function decodeCursor(cursor: string, partitionAttribute: string, partitionValue: string): Record<string, unknown> {
  const invalid = () => ValidationError.single("cursor", "cursor is not a cursor returned by this list");
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  if (typeof decoded !== "object" || decoded === null || Array.isArray(decoded)) throw invalid();
  const startKey = decoded as Record<string, unknown>;
  const expected = keyAttributesFor(partitionAttribute);
  if (!expected || Object.keys(startKey).length !== expected.length) throw invalid();
  for (const attribute of expected) {
    const value = startKey[attribute];
    if (typeof value !== "string" || value.length === 0 || Buffer.byteLength(value, "utf8") > keyByteLimit(attribute)) throw invalid();
  }
  if (startKey[partitionAttribute] !== partitionValue) throw invalid();
  return startKey;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** One partition (or a sort-key range of it) read in key order, with an optional filter. */
export interface PartitionRead {
  /** Query a secondary index instead of the table. */
  index?: IndexName;
  /** Exact partition key value. */
  partition: string;
  /** Optional `begins_with` on the sort key. */
  sortKeyPrefix?: string;
  /** Optional inclusive sort-key range (`BETWEEN`), e.g. a time range of time-keyed items. */
  sortKeyBetween?: readonly [string, string];
  /** Extra filter applied after the key condition (DynamoDB applies `Limit` before filtering). */
  filter?: { expression: string; names?: Record<string, string>; values?: Record<string, unknown> };
  newestFirst?: boolean;
  /** Attributes to read (all when absent); the key attributes are always added (the cursor is built from them). */
  projection?: string[];
  /** Receives the read's consumed capacity units (asks DynamoDB to report them). */
  onConsumedCapacity?: ((capacityUnits: number) => void) | undefined;
}

export interface PageQuery extends PartitionRead {
  limit: number;
  cursor?: string | undefined;
}

const keyAttributesOf = (read: PartitionRead) => keyAttributesFor(read.index ? `${read.index}PK` : "PK") as string[];

function decodeStartKey(read: PartitionRead, cursor: string): Record<string, unknown> {
  const pkAttribute = read.index ? `${read.index}PK` : "PK";
  const skAttribute = read.index ? `${read.index}SK` : "SK";
  const startKey = decodeCursor(cursor, pkAttribute, read.partition);
  const sortKey = startKey[skAttribute];
  if (read.sortKeyPrefix !== undefined && !(typeof sortKey === "string" && sortKey.startsWith(read.sortKeyPrefix))) {
    throw ValidationError.single("cursor", "cursor is not a cursor returned by this list");
  }
  return startKey;
}

/** One Query call: `Limit` items evaluated from `startKey` (fewer returned when a filter drops some). */
async function readOnce(read: PartitionRead, limit: number, startKey: Record<string, unknown> | undefined) {
  const pkAttribute = read.index ? `${read.index}PK` : "PK";
  const skAttribute = read.index ? `${read.index}SK` : "SK";
  const projected = read.projection ? [...new Set([...read.projection, ...keyAttributesOf(read)])] : [];
  const projectionNames = Object.fromEntries(projected.map((attribute, i) => [`#p${i}`, attribute]));
  const names: Record<string, string> = { "#pk": pkAttribute, ...read.filter?.names, ...projectionNames };
  const values: Record<string, unknown> = { ":pk": read.partition, ...read.filter?.values };
  let keyCondition = "#pk = :pk";
  if (read.sortKeyPrefix !== undefined) {
    names["#sk"] = skAttribute;
    values[":skPrefix"] = read.sortKeyPrefix;
    keyCondition += " AND begins_with(#sk, :skPrefix)";
  }
  if (read.sortKeyBetween !== undefined) {
    names["#sk"] = skAttribute;
    values[":skFrom"] = read.sortKeyBetween[0];
    values[":skTo"] = read.sortKeyBetween[1];
    keyCondition += " AND #sk BETWEEN :skFrom AND :skTo";
  }
  const input: QueryCommandInput = {
    TableName: tableName(),
    IndexName: read.index,
    KeyConditionExpression: keyCondition,
    FilterExpression: read.filter?.expression,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ProjectionExpression: read.projection ? Object.keys(projectionNames).join(", ") : undefined,
    Limit: limit,
    ScanIndexForward: !read.newestFirst,
    ExclusiveStartKey: startKey,
    ReturnConsumedCapacity: read.onConsumedCapacity ? "TOTAL" : undefined,
  };
  const output = await documentClient().send(new QueryCommand(input));
  if (output.ConsumedCapacity) read.onConsumedCapacity?.(output.ConsumedCapacity.CapacityUnits ?? 0);
  return { items: (output.Items ?? []) as Record<string, unknown>[], lastEvaluatedKey: output.LastEvaluatedKey };
}

/**
 * The page core: reads the partitions in order from `start`, one item ahead (`limit + 1`), so a
 * page is full unless it is the last, and the last page's cursor is null even when it is full.
 * The cursor is the key of the last returned item (not LastEvaluatedKey, which points one past
 * it). When a read stops early (a filter dropped items, or DynamoDB's 1 MB answer limit), the page
 * ends there with that read's LastEvaluatedKey: every partition is read at most once per page.
 */
async function collectPage<T>(
  reads: readonly PartitionRead[],
  limit: number,
  start: { read: number; startKey?: Record<string, unknown> | undefined },
  encode: (read: number, key: Record<string, unknown>) => string,
): Promise<Page<T>> {
  const collected: Array<{ read: number; item: Record<string, unknown> }> = [];
  for (let index = start.read, startKey = start.startKey; index < reads.length; index++, startKey = undefined) {
    const read = reads[index] as PartitionRead;
    const output = await readOnce(read, limit + 1 - collected.length, startKey);
    collected.push(...output.items.map((item) => ({ read: index, item })));
    if (collected.length > limit) {
      const last = collected[limit - 1] as { read: number; item: Record<string, unknown> };
      const lastKey = Object.fromEntries(
        keyAttributesOf(reads[last.read] as PartitionRead).map((attribute) => [attribute, last.item[attribute]]),
      );
      return { items: collected.slice(0, limit).map((entry) => entry.item as T), nextCursor: encode(last.read, lastKey) };
    }
    if (output.lastEvaluatedKey)
      return { items: collected.map((entry) => entry.item as T), nextCursor: encode(index, output.lastEvaluatedKey) };
  }
  return { items: collected.map((entry) => entry.item as T), nextCursor: null };
}

/**
 * A page cursor belongs to the whole read it was returned for: index, partition(s), sort-key range,
 * filter and order. Its fingerprint (a hash of them) follows the key after a `.` (never in base64url),
 * so a cursor of `?status=UNASSIGNED` does not continue `?status=ONGOING` even where both read the
 * same partition: a 400, as any cursor of another list.
 */
function readsFingerprint(reads: readonly PartitionRead[]): string {
  const identity = reads.map((read) => [
    read.index ?? null,
    read.partition,
    read.sortKeyPrefix ?? null,
    ...(read.sortKeyBetween ? [read.sortKeyBetween] : []),
    read.filter ?? null,
    !!read.newestFirst,
  ]);
  return createHash("sha256").update(JSON.stringify(identity)).digest("base64url").slice(0, 16);
}

const withFingerprint = (cursor: string, reads: readonly PartitionRead[]) => `${cursor}.${readsFingerprint(reads)}`;

function withoutFingerprint(cursor: string, reads: readonly PartitionRead[]): string {
  const dot = cursor.lastIndexOf(".");
  if (dot < 0 || cursor.slice(dot + 1) !== readsFingerprint(reads)) {
    throw ValidationError.single("cursor", "cursor is not a cursor returned by this list (with these filters)");
  }
  return cursor.slice(0, dot);
}

/** One bounded page of a single partition: never a Scan, never more than `limit + 1` items read. */
export async function queryPage<T>(query: PageQuery): Promise<Page<T>> {
  const startKey = query.cursor ? decodeStartKey(query, withoutFingerprint(query.cursor, [query])) : undefined;
  return collectPage<T>([query], query.limit, { read: 0, startKey }, (_read, key) => withFingerprint(encodeCursor(key) as string, [query]));
}

/**
 * One page over several partitions read one after the other (a hub-limited token's lists: one
 * partition per allowed hub, so nothing of another hub is read and skipped). The cursor records
 * which partition the page stopped in and the key inside it, and is checked on decode like a
 * single-partition cursor (exactly `{ p, c }`, the partition index must exist, the key must lie in
 * that partition). With one partition it is queryPage, cursor and all.
 */
export async function queryPageAcross<T>(reads: readonly PartitionRead[], limit: number, cursor: string | undefined): Promise<Page<T>> {
  if (reads.length === 0) return { items: [], nextCursor: null };
  // One partition: the plain cursor of queryPage (still bound to that partition on decode).
  if (reads.length === 1) return queryPage<T>({ ...(reads[0] as PartitionRead), limit, cursor });
  const invalid = () => ValidationError.single("cursor", "cursor is not a cursor returned by this list");
  let start: { read: number; startKey?: Record<string, unknown> } = { read: 0 };
  if (cursor) {
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(withoutFingerprint(cursor, reads), "base64url").toString("utf8"));
    } catch {
      throw invalid();
    }
    if (typeof decoded !== "object" || decoded === null || Array.isArray(decoded) || Object.keys(decoded).sort().join() !== "c,p")
      throw invalid();
    const { p, c } = decoded as { p?: unknown; c?: unknown };
    if (typeof p !== "number" || !Number.isInteger(p) || p < 0 || p >= reads.length || typeof c !== "string" || c.length === 0)
      throw invalid();
    start = { read: p, startKey: decodeStartKey(reads[p] as PartitionRead, c) };
  }
  const encode = (read: number, key: Record<string, unknown>) =>
    withFingerprint(Buffer.from(JSON.stringify({ p: read, c: encodeCursor(key) }), "utf8").toString("base64url"), reads);
  return collectPage<T>(reads, limit, start, encode);
}

/**
 * Every item of one index partition, in key order, up to `max` — for jobs that need a bounded
 * batch rather than a page (a run's vehicles and visits, a hub's profiles). Pages only because
 * DynamoDB answers at most 1 MB per call; never reads more than `max` items.
 */
export async function queryUpTo(query: {
  index: IndexName;
  partition: string;
  max: number;
  projection?: string[];
}): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  const projectionNames = Object.fromEntries((query.projection ?? []).map((attribute, i) => [`#p${i}`, attribute]));
  let startKey: Record<string, unknown> | undefined;
  do {
    const output = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: query.index,
        KeyConditionExpression: "#pk = :pk",
        ExpressionAttributeNames: { "#pk": `${query.index}PK`, ...projectionNames },
        ExpressionAttributeValues: { ":pk": query.partition },
        ProjectionExpression: query.projection ? Object.keys(projectionNames).join(", ") : undefined,
        Limit: query.max - items.length,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(output.Items ?? []));
    startKey = output.LastEvaluatedKey;
  } while (startKey && items.length < query.max);
  return items;
}
