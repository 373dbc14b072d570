import { type PageQuery, queryPage, queryPageAcross } from "#shared/store/pagination";

/**
 * The search index read. Each record has one token item per distinct word of its searchable fields
 * (shared/store/keys.ts `searchToken`), in the organization's partition of the word's first
 * character, written outside the record's transaction (shared/store/record-store.ts), so `q` is ONE
 * range read `begins_with(SK, <word>)`: with a type, filtered on `dataTypeId`; without one, not.
 * It reads only the token items of matching words (a few hundred bytes each), never other records.
 */

/** Receives the capacity units of every read (tests pass one to prove what a search costs). */
export type CapacityRecorder = (operation: "Query" | "BatchGetItem", capacityUnits: number) => void;

export interface TokenHit {
  token: string;
  recordId: string;
  dataTypeId: string;
  hubScope: string;
  dataId: string;
  /** The record version the token was written for, and when (epoch ms): the repair's conditions. */
  version: number;
  writtenAt: number;
}

/** Hub filter of a record or token partition: one hub scope, or any of the token's (at most 100). */
export function hubScopeFilter(hubScope: string | undefined, allowedHubScopes: string[] | undefined): PageQuery["filter"] {
  if (hubScope !== undefined) return { expression: "hubScope = :scope", values: { ":scope": hubScope } };
  if (!allowedHubScopes) return undefined;
  const values = Object.fromEntries(allowedHubScopes.slice(0, 100).map((hubId, i) => [`:hub${i}`, hubId]));
  return { expression: `hubScope IN (${Object.keys(values).join(", ")})`, values };
}

const reportQuery = (recorder: CapacityRecorder | undefined) => recorder && ((units: number) => recorder("Query", units));

/** `a AND b` of two optional filters. */
function bothFilters(a: PageQuery["filter"], b: PageQuery["filter"]): PageQuery["filter"] {
  if (!a || !b) return a ?? b;
  return { expression: `(${a.expression}) AND (${b.expression})`, values: { ...a.values, ...b.values } };
}

const unescapeKeyPart = (part: string) => part.replaceAll("%23", "#").replaceAll("%25", "%");

/**
 * One page of token hits of a word prefix: `dataTypeId` given, that type's (filtered after the
 * key read, so other types' tokens of the same words are read and dropped: the price of one item
 * per token); `filter` the hub scopes.
 */
export async function searchTokenPage(query: {
  partition: string;
  prefix: string;
  dataTypeId?: string | undefined;
  filter: PageQuery["filter"];
  limit: number;
  cursor?: string | undefined;
  recorder?: CapacityRecorder | undefined;
}): Promise<{ hits: TokenHit[]; nextCursor: string | null }> {
  const typeFilter: PageQuery["filter"] =
    query.dataTypeId === undefined ? undefined : { expression: "dataTypeId = :type", values: { ":type": query.dataTypeId } };
  const page = await queryPage<Record<string, unknown>>({
    partition: query.partition,
    sortKeyPrefix: query.prefix,
    filter: bothFilters(typeFilter, query.filter),
    projection: ["SK", "recordId", "dataTypeId", "hubScope", "dataId", "version", "writtenAt"],
    limit: query.limit,
    cursor: query.cursor,
    onConsumedCapacity: reportQuery(query.recorder),
  });
  const hits = page.items.map((item) => {
    const sk = item.SK as string;
    return {
      token: unescapeKeyPart(sk.slice(0, sk.indexOf("#"))),
      recordId: item.recordId as string,
      dataTypeId: item.dataTypeId as string,
      hubScope: item.hubScope as string,
      dataId: item.dataId as string,
      version: Number(item.version ?? 0),
      writtenAt: Number(item.writtenAt ?? 0),
    };
  });
  return { hits, nextCursor: page.nextCursor };
}

/**
 * One page of a type's record partition (GET /data without q), reporting capacity like the search.
 * A hub-limited token's list reads each allowed hub's key range (`REC#<hub>#`) in turn, so no other
 * hub's record is read and skipped.
 */
export async function recordListPage(query: {
  partition: string;
  prefix: string;
  /** The key prefix of one hub scope's records (`REC#<hub>#`). */
  hubPrefix: (hubScope: string) => string;
  allowedHubScopes?: string[] | undefined;
  limit: number;
  cursor?: string | undefined;
  recorder?: CapacityRecorder | undefined;
}): Promise<{ items: Record<string, unknown>[]; nextCursor: string | null }> {
  if (query.allowedHubScopes) {
    const reads = [...new Set(query.allowedHubScopes)].map((hubScope) => ({
      partition: query.partition,
      sortKeyPrefix: query.hubPrefix(hubScope),
      onConsumedCapacity: reportQuery(query.recorder),
    }));
    return queryPageAcross<Record<string, unknown>>(reads, query.limit, query.cursor);
  }
  return queryPage<Record<string, unknown>>({
    partition: query.partition,
    sortKeyPrefix: query.prefix,
    limit: query.limit,
    cursor: query.cursor,
    onConsumedCapacity: reportQuery(query.recorder),
  });
}

/** `hubScope` is one of `hubScopes` or common (`*`): the filter of the organization-wide reads. */
export function organizationHubScopeFilter(hubScopes: string[] | undefined): PageQuery["filter"] {
  if (!hubScopes) return undefined;
  const values: Record<string, unknown> = Object.fromEntries(hubScopes.slice(0, 100).map((hubId, i) => [`:hub${i}`, hubId]));
  const inList = Object.keys(values).join(", ");
  values[":common"] = "*";
  return { expression: inList === "" ? "hubScope = :common" : `hubScope = :common OR hubScope IN (${inList})`, values };
}

/**
 * GET /data without a type: ONE read of the organization's records partition of GSI1 (every stored
 * record carries it, sort key its `_id`), newest first. Hub filter as the organization-wide search's:
 * the given hub scope, or the token's hubs; common (`*`) records always qualify. The filter is
 * applied after `limit` items are read, so a page may hold fewer (follow nextCursor).
 */
export async function organizationRecordPage(query: {
  partition: string;
  hubScopes?: string[] | undefined;
  limit: number;
  cursor?: string | undefined;
  recorder?: CapacityRecorder | undefined;
}): Promise<{ items: Record<string, unknown>[]; nextCursor: string | null }> {
  return queryPage<Record<string, unknown>>({
    index: "GSI1",
    partition: query.partition,
    filter: organizationHubScopeFilter(query.hubScopes),
    newestFirst: true,
    limit: query.limit,
    cursor: query.cursor,
    onConsumedCapacity: reportQuery(query.recorder),
  });
}
