import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { ValidationError } from "#shared/domain/errors";
import { documentClient, tableName } from "#shared/store/dynamo";
import { decodeCursor, encodeCursor } from "#shared/store/pagination";

/**
 * The search index read. Each record writes one token item per distinct word of its searchable
 * fields (SK `<token>#<record _id>`, in the record's own transaction), so `q` is ONE range read of
 * the type's token partition with `begins_with(SK, <word>)`: it reads only the token items of
 * matching words (a few dozen bytes each), never the type's other records.
 */

/** Receives the capacity units of every read (tests pass one to prove what a search costs). */
export type CapacityRecorder = (operation: "Query" | "BatchGetItem", capacityUnits: number) => void;

export interface TokenHit {
  token: string;
  recordId: string;
  hubScope: string;
  dataId: string;
}

export interface TokenPageQuery {
  partition: string;
  prefix: string;
  hubScope?: string | undefined;
  allowedHubScopes?: string[] | undefined;
  limit: number;
  cursor?: string | undefined;
  recorder?: CapacityRecorder | undefined;
}

export async function searchTokenPage(query: TokenPageQuery): Promise<{ hits: TokenHit[]; nextCursor: string | null }> {
  const values: Record<string, unknown> = { ":pk": query.partition, ":prefix": query.prefix };
  let filter: string | undefined;
  if (query.hubScope !== undefined) {
    values[":scope"] = query.hubScope;
    filter = "hubScope = :scope";
  } else if (query.allowedHubScopes) {
    const placeholders = query.allowedHubScopes.slice(0, 100).map((hubId, i) => {
      values[`:hub${i}`] = hubId;
      return `:hub${i}`;
    });
    filter = `hubScope IN (${placeholders.join(", ")})`;
  }
  let startKey: Record<string, unknown> | undefined;
  if (query.cursor !== undefined) {
    startKey = decodeCursor(query.cursor, "PK", query.partition);
    if (typeof startKey.SK !== "string" || !startKey.SK.startsWith(query.prefix)) throw ValidationError.single("cursor", "cursor is not a cursor returned by this list");
  }
  const output = await documentClient().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
      FilterExpression: filter,
      ExpressionAttributeValues: values,
      ProjectionExpression: "SK, recordId, hubScope, dataId",
      Limit: query.limit,
      ExclusiveStartKey: startKey,
      ReturnConsumedCapacity: query.recorder ? "TOTAL" : undefined,
    }),
  );
  if (output.ConsumedCapacity) query.recorder?.("Query", output.ConsumedCapacity.CapacityUnits ?? 0);
  const hits = (output.Items ?? []).map((item) => {
    const sk = item.SK as string;
    return { token: sk.slice(0, sk.lastIndexOf("#")), recordId: item.recordId as string, hubScope: item.hubScope as string, dataId: item.dataId as string };
  });
  return { hits, nextCursor: encodeCursor(output.LastEvaluatedKey) };
}

/** One page of a type's record partition (GET /data without q), reporting capacity like the search. */
export async function recordListPage(query: {
  partition: string;
  prefix: string;
  allowedHubScopes?: string[] | undefined;
  limit: number;
  cursor?: string | undefined;
  recorder?: CapacityRecorder | undefined;
}): Promise<{ items: Record<string, unknown>[]; nextCursor: string | null }> {
  const values: Record<string, unknown> = { ":pk": query.partition, ":prefix": query.prefix };
  let filter: string | undefined;
  if (query.allowedHubScopes) {
    const placeholders = query.allowedHubScopes.slice(0, 100).map((hubId, i) => {
      values[`:hub${i}`] = hubId;
      return `:hub${i}`;
    });
    filter = `hubScope IN (${placeholders.join(", ")})`;
  }
  let startKey: Record<string, unknown> | undefined;
  if (query.cursor !== undefined) {
    startKey = decodeCursor(query.cursor, "PK", query.partition);
    if (typeof startKey.SK !== "string" || !startKey.SK.startsWith(query.prefix)) throw ValidationError.single("cursor", "cursor is not a cursor returned by this list");
  }
  const output = await documentClient().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
      FilterExpression: filter,
      ExpressionAttributeValues: values,
      Limit: query.limit,
      ExclusiveStartKey: startKey,
      ReturnConsumedCapacity: query.recorder ? "TOTAL" : undefined,
    }),
  );
  if (output.ConsumedCapacity) query.recorder?.("Query", output.ConsumedCapacity.CapacityUnits ?? 0);
  return { items: output.Items ?? [], nextCursor: encodeCursor(output.LastEvaluatedKey) };
}
