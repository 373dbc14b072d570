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

export interface PageQuery {
  /** Query a secondary index instead of the table. */
  index?: IndexName;
  /** Exact partition key value. */
  partition: string;
  /** Optional `begins_with` on the sort key. */
  sortKeyPrefix?: string;
  limit: number;
  cursor?: string | undefined;
  /** Extra filter applied after the key condition (DynamoDB applies `Limit` before filtering). */
  filter?: { expression: string; names?: Record<string, string>; values?: Record<string, unknown> };
  newestFirst?: boolean;
  /** Attributes to read (all when absent). */
  projection?: string[];
  /** Receives the read's consumed capacity units (asks DynamoDB to report them). */
  onConsumedCapacity?: ((capacityUnits: number) => void) | undefined;
}

function decodeStartKey(query: PageQuery, pkAttribute: string, skAttribute: string): Record<string, unknown> {
  const startKey = decodeCursor(query.cursor ?? "", pkAttribute, query.partition);
  const sortKey = startKey[skAttribute];
  if (query.sortKeyPrefix !== undefined && !(typeof sortKey === "string" && sortKey.startsWith(query.sortKeyPrefix))) {
    throw ValidationError.single("cursor", "cursor is not a cursor returned by this list");
  }
  return startKey;
}

/** One bounded page of a single partition: never a Scan, never more than `limit` items read. */
export async function queryPage<T>(query: PageQuery): Promise<Page<T>> {
  const pkAttribute = query.index ? `${query.index}PK` : "PK";
  const skAttribute = query.index ? `${query.index}SK` : "SK";
  const projectionNames = Object.fromEntries((query.projection ?? []).map((attribute, i) => [`#p${i}`, attribute]));
  const names: Record<string, string> = { "#pk": pkAttribute, ...query.filter?.names, ...projectionNames };
  const values: Record<string, unknown> = { ":pk": query.partition, ...query.filter?.values };
  let keyCondition = "#pk = :pk";
  if (query.sortKeyPrefix !== undefined) {
    names["#sk"] = skAttribute;
    values[":skPrefix"] = query.sortKeyPrefix;
    keyCondition += " AND begins_with(#sk, :skPrefix)";
  }
  const input: QueryCommandInput = {
    TableName: tableName(),
    IndexName: query.index,
    KeyConditionExpression: keyCondition,
    FilterExpression: query.filter?.expression,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ProjectionExpression: query.projection ? Object.keys(projectionNames).join(", ") : undefined,
    Limit: query.limit,
    ScanIndexForward: !query.newestFirst,
    ExclusiveStartKey: query.cursor ? decodeStartKey(query, pkAttribute, skAttribute) : undefined,
    ReturnConsumedCapacity: query.onConsumedCapacity ? "TOTAL" : undefined,
  };
  const output = await documentClient().send(new QueryCommand(input));
  if (output.ConsumedCapacity) query.onConsumedCapacity?.(output.ConsumedCapacity.CapacityUnits ?? 0);
  return { items: (output.Items ?? []) as T[], nextCursor: encodeCursor(output.LastEvaluatedKey) };
}

/**
 * Every item of one index partition, in key order, up to `max` — for jobs that need a bounded
 * batch rather than a page (a run's vehicles and visits, a hub's profiles). Pages only because
 * DynamoDB answers at most 1 MB per call; never reads more than `max` items.
 */
export async function queryUpTo(query: { index: IndexName; partition: string; max: number; projection?: string[] }): Promise<Record<string, unknown>[]> {
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
