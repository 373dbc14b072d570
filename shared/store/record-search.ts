import { type PageQuery, queryPage, queryPageAcross } from "#shared/store/pagination";

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

/** Hub filter of a record or token partition: one hub scope, or any of the token's (at most 100). */
function hubScopeFilter(hubScope: string | undefined, allowedHubScopes: string[] | undefined): PageQuery["filter"] {
  if (hubScope !== undefined) return { expression: "hubScope = :scope", values: { ":scope": hubScope } };
  if (!allowedHubScopes) return undefined;
  const values = Object.fromEntries(allowedHubScopes.slice(0, 100).map((hubId, i) => [`:hub${i}`, hubId]));
  return { expression: `hubScope IN (${Object.keys(values).join(", ")})`, values };
}

const reportQuery = (recorder: CapacityRecorder | undefined) => recorder && ((units: number) => recorder("Query", units));

export async function searchTokenPage(query: TokenPageQuery): Promise<{ hits: TokenHit[]; nextCursor: string | null }> {
  const page = await queryPage<Record<string, unknown>>({
    partition: query.partition,
    sortKeyPrefix: query.prefix,
    filter: hubScopeFilter(query.hubScope, query.allowedHubScopes),
    projection: ["SK", "recordId", "hubScope", "dataId"],
    limit: query.limit,
    cursor: query.cursor,
    onConsumedCapacity: reportQuery(query.recorder),
  });
  const hits = page.items.map((item) => {
    const sk = item.SK as string;
    return {
      token: sk.slice(0, sk.lastIndexOf("#")),
      recordId: item.recordId as string,
      hubScope: item.hubScope as string,
      dataId: item.dataId as string,
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
function organizationHubScopeFilter(hubScopes: string[] | undefined): PageQuery["filter"] {
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

export interface OrganizationTokenHit extends TokenHit {
  dataTypeId: string;
}

/**
 * The organization-wide search read (GET /data?q= without a type): ONE range read of the GSI1
 * partition of the word's first character, `begins_with(GSI1SK, <word>)`. The same token items as
 * the typed search (their GSI1 key is the organization's), so it reads only matching words' items.
 * Hub filter: the given hub scope, or the token's hubs; common (`*`) records always qualify.
 */
export async function searchOrganizationTokenPage(query: {
  partition: string;
  prefix: string;
  hubScopes?: string[] | undefined;
  limit: number;
  cursor?: string | undefined;
  recorder?: CapacityRecorder | undefined;
}): Promise<{ hits: OrganizationTokenHit[]; nextCursor: string | null }> {
  const filter = organizationHubScopeFilter(query.hubScopes);
  const page = await queryPage<Record<string, unknown>>({
    index: "GSI1",
    partition: query.partition,
    sortKeyPrefix: query.prefix,
    filter,
    projection: ["GSI1SK", "recordId", "dataTypeId", "hubScope", "dataId"],
    limit: query.limit,
    cursor: query.cursor,
    onConsumedCapacity: reportQuery(query.recorder),
  });
  const hits = page.items.map((item) => {
    const sk = item.GSI1SK as string;
    return {
      token: sk.slice(0, sk.indexOf("#")),
      recordId: item.recordId as string,
      dataTypeId: item.dataTypeId as string,
      hubScope: item.hubScope as string,
      dataId: item.dataId as string,
    };
  });
  return { hits, nextCursor: page.nextCursor };
}
