import { createHash } from "node:crypto";
import { type Caller, callerMayUseHub } from "#shared/domain/caller";
import type { DataType } from "#shared/domain/data-types/schema";
import { NotFoundError, ValidationError, type FieldIssue } from "#shared/domain/errors";
import { ID_PATTERN, newId } from "#shared/domain/ids";
import { recordErrors } from "#shared/domain/records/errors";
import { hiddenFieldsFor, isReportedHit, parseSearch, relationLinks, searchTokens, uniqueGuards } from "#shared/domain/records/rules";
import {
  COMMON_SCOPE,
  envelopeKeys,
  hubScopeOf,
  type RecordCreateInput,
  type RecordGetQuery,
  type RecordListQuery,
  type RecordReplaceInput,
  type StoredRecord,
  systemViewKeys,
} from "#shared/domain/records/schema";
import { checkRecordValues, isReadOnlyField, isTitleField, relationReferences, titleProblem } from "#shared/domain/records/values";
import { estimatedItemBytes, MAX_RECORD_BYTES } from "#shared/domain/records/size";
import { buildView, type Projection } from "#shared/domain/records/view";
import { formatDateTimeUtc } from "#shared/domain/time";
import { type VersionCondition, writeUnder } from "#shared/domain/versions";

export interface VersionedRecord {
  record: StoredRecord;
  version: number;
}

/** Where a record lives: its type and hub scope (`*` for commonData), and its dataId. */
export interface RecordLocation {
  dataTypeId: string;
  hubScope: string;
  dataId: string;
}

/** What the record's transaction checks besides the record: the type (version, no delete fence) and a new hub. */
export interface WriteContext {
  dataTypeVersion: number;
  /** A hub that must exist (set when the record enters a hub). */
  hubToCheck?: string | undefined;
}

export interface RecordPage {
  items: StoredRecord[];
  nextCursor: string | null;
}

export interface SearchPage {
  /** Index hits in token order; the same record may appear at several tokens. */
  hits: Array<{ token: string; record: StoredRecord }>;
  nextCursor: string | null;
}

export interface ScopeFilter {
  /** Only this hub scope. */
  hubScope?: string | undefined;
  /** Only these hub scopes (the caller's hubs); undefined = every hub. */
  allowedHubScopes?: string[] | undefined;
}

/**
 * Persistence port of the records area (DynamoDB: shared/store/record-store.ts). Each write is one
 * TransactWriteItems over the record, its ref item, the guards, tokens and links of its `index`,
 * a check of the data type (version, no delete fence) and of a new hub; it throws the
 * recordErrors conflicts, a 400 on hubId for a missing hub, 404/409 for a stale `previous`.
 */
export interface RecordStore {
  find(organizationId: string, location: RecordLocation): Promise<VersionedRecord | undefined>;
  findById(organizationId: string, recordId: string): Promise<VersionedRecord | undefined>;
  /** Every (type, hub) holding this dataId, at most 50. */
  locate(organizationId: string, dataId: string): Promise<RecordLocation[]>;
  create(record: StoredRecord, context: WriteContext & { commonData: boolean }): Promise<void>;
  replace(next: StoredRecord, previous: VersionedRecord, context: WriteContext & { commonData: boolean }): Promise<void>;
  remove(previous: VersionedRecord): Promise<void>;
  list(
    organizationId: string,
    dataTypeId: string,
    filter: ScopeFilter & { limit: number; cursor?: string | undefined },
  ): Promise<RecordPage>;
  search(
    organizationId: string,
    dataTypeId: string,
    filter: ScopeFilter & { indexWord: string; limit: number; cursor?: string | undefined },
  ): Promise<SearchPage>;
  /**
   * The same search across every type of the organization (one index read, one cursor). `hubScopes`:
   * only records of these hubs or common to all; undefined = every hub.
   */
  searchOrganization(
    organizationId: string,
    filter: { indexWord: string; hubScopes?: string[] | undefined; limit: number; cursor?: string | undefined },
  ): Promise<SearchPage>;
  /** Every stored record of the organization, newest first (`_id` order); `hubScopes` keeps those scopes and common records. */
  listOrganization(
    organizationId: string,
    filter: { hubScopes?: string[] | undefined; limit: number; cursor?: string | undefined },
  ): Promise<{ items: StoredRecord[]; nextCursor: string | null }>;
  /** `_id`s of records of `sourceDataTypeId` whose field `fieldId` names `targetRecordId` (at most `limit`). */
  linkedIds(organizationId: string, targetRecordId: string, sourceDataTypeId: string, fieldId: string, limit: number): Promise<string[]>;
}

export interface DataTypeLookup {
  findById(organizationId: string, dataTypeId: string): Promise<{ dataType: DataType; version: number } | undefined>;
  findByName(organizationId: string, name: string): Promise<{ dataType: DataType; version: number } | undefined>;
}

/** Platform entities a standard relation may name, where this service can check them. */
export interface EntityLookup {
  hubExists(organizationId: string, hubId: string): Promise<boolean>;
  vehicleExists(organizationId: string, vehicleId: string): Promise<boolean>;
}

/** Reads an external-api data type's items (shared/http/external-provider.ts); throws UpstreamError. */
export interface ExternalRecordSource {
  fetchItems(providerConfig: { url: string; key?: string | undefined }): Promise<unknown[]>;
}

export interface RecordServiceDependencies {
  store: RecordStore;
  dataTypes: DataTypeLookup;
  entities: EntityLookup;
  external: ExternalRecordSource;
  now?: () => Date;
}

interface ResolvedType {
  dataType: DataType;
  version: number;
}

/** hasMany reads return at most this many `_id`s. */
export const MAX_RESOLVED_RELATIONS = 100;

const writableKeys = (dataType: DataType) =>
  new Set(dataType.fields.filter((field) => !isTitleField(field) && !isReadOnlyField(field)).map((field) => field.id));

/** The custom keys of a body, as own data properties (a key such as `constructor` is data, never inherited). */
function splitEnvelope(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([key]) => !(envelopeKeys as readonly string[]).includes(key)));
}

function parseFieldList(dataType: DataType, text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const names = [
    ...new Set(
      text
        .split(",")
        .map((name) => name.trim())
        .filter((name) => name !== ""),
    ),
  ];
  if (names.length === 0) throw ValidationError.single("fields", "name at least one field");
  const known = new Set([...dataType.fields.map((field) => field.id), ...systemViewKeys]);
  const unknown = names.filter((name) => !known.has(name));
  if (unknown.length > 0) throw ValidationError.single("fields", `not fields of this data type: ${unknown.join(", ")}`);
  return names;
}

/** Hidden fields, and the `fields` projection (403 when it names a hidden field). */
function projectionFor(caller: Caller, dataType: DataType, fieldsParam: string | undefined): Projection {
  const hidden = hiddenFieldsFor(caller, dataType._id);
  const fields = parseFieldList(dataType, fieldsParam);
  const restricted = (fields ?? []).filter((name) => hidden.has(name));
  if (restricted.length > 0) throw recordErrors.restrictedFields(restricted);
  return { hidden, fields };
}

/** Write responses show what a GET would: the caller's hidden fields are left out (the write itself is allowed). */
const writeProjection = (caller: Caller, dataType: DataType): Projection => ({ hidden: hiddenFieldsFor(caller, dataType._id) });

/**
 * Every belongsTo/belongsToMany id a write brings into `values` must name an existing target (a
 * record of the target type, or a hub/vehicle of the organization; user, role and flow live in the
 * identity provider and are not checked). Ids the field already held in `previous` (the stored
 * values of the record being replaced or patched) are not checked again: a target deleted since
 * leaves a dangling id that reads as it was stored, and it must never block an edit of the record
 * (refusing the target's delete instead would make every popular target a hot item). Shared by
 * records and by entity custom values (shared/domain/extensions).
 */
export async function relationTargetIssues(
  lookups: { store: Pick<RecordStore, "findById">; entities: EntityLookup },
  organizationId: string,
  dataType: DataType,
  values: Record<string, unknown>,
  previous: Record<string, unknown> = {},
): Promise<FieldIssue[]> {
  const { store, entities } = lookups;
  const held = new Map(relationReferences(dataType, previous).map(({ field, ids }) => [field.id, new Set(ids)]));
  const checks = relationReferences(dataType, values).flatMap(({ field, ids }) =>
    ids
      .filter((id) => !held.get(field.id)?.has(id))
      .map(async (id): Promise<FieldIssue | undefined> => {
        const relation = field.relation;
        if (!relation) return undefined;
        let exists = true;
        if (relation.targetKind === "dataType") {
          const target = ID_PATTERN.test(id) ? await store.findById(organizationId, id) : undefined;
          exists = target?.record.dataTypeId === relation.target;
        } else if (relation.target === "vehicle") exists = await entities.vehicleExists(organizationId, id);
        else if (relation.target === "hub") exists = await entities.hubExists(organizationId, id);
        return exists
          ? undefined
          : {
              field: field.id,
              message: `${id} is not an existing ${relation.targetKind === "dataType" ? "record of the target data type" : relation.target} of this organization`,
            };
      }),
  );
  return (await Promise.all(checks)).filter((issue): issue is FieldIssue => issue !== undefined);
}

export function createRecordService(dependencies: RecordServiceDependencies) {
  const { store, dataTypes, entities, external } = dependencies;
  const now = dependencies.now ?? (() => new Date());

  /** The type named by id and/or name; `missing` decides 400 (a body reference) or 404 (a read). */
  async function resolveType(
    organizationId: string,
    ref: { dataTypeId?: string | undefined; dataTypeName?: string | undefined },
    missing: "400" | "404",
  ): Promise<ResolvedType> {
    if (ref.dataTypeId === undefined && ref.dataTypeName === undefined)
      throw ValidationError.single("dataTypeId", "dataTypeId or dataTypeName is required");
    const byId = ref.dataTypeId !== undefined ? await dataTypes.findById(organizationId, ref.dataTypeId) : undefined;
    const byName = ref.dataTypeName !== undefined ? await dataTypes.findByName(organizationId, ref.dataTypeName) : undefined;
    const field = ref.dataTypeId !== undefined ? "dataTypeId" : "dataTypeName";
    const found = byId ?? byName;
    if ((ref.dataTypeId !== undefined && !byId) || (ref.dataTypeName !== undefined && !byName) || !found) {
      if (missing === "404") throw new NotFoundError();
      throw ValidationError.single(field, "names no data type of this organization");
    }
    if (byId && byName && byId.dataType._id !== byName.dataType._id)
      throw ValidationError.single("dataTypeName", "dataTypeId and dataTypeName name different data types");
    return found;
  }

  function assertWritable(dataType: DataType): void {
    if (dataType.extends)
      throw ValidationError.single(
        "dataTypeId",
        `an extension data type (extends ${dataType.extends.entity}) adds fields to a platform entity; it has no records of its own`,
      );
    if (dataType.provider === "external-api")
      throw ValidationError.single("dataTypeId", "records of an external-api data type are read from its API and cannot be written here");
    if (dataType.locked) throw recordErrors.dataTypeLocked();
  }

  /** Hub of a written record: null for commonData; else required and allowed by the token. */
  function hubIssues(caller: Caller, dataType: DataType, hubId: string | null | undefined): FieldIssue[] {
    if (dataType.commonData) {
      return hubId === undefined || hubId === null
        ? []
        : [{ field: "hubId", message: "records of a commonData data type are shared by every hub: send no hubId" }];
    }
    if (hubId === undefined || hubId === null) return [{ field: "hubId", message: "hubId is required (the data type is not commonData)" }];
    return callerMayUseHub(caller, hubId) ? [] : [{ field: "hubId", message: "hubId must be one of the hubs your token allows" }];
  }

  const relationIssues = (
    organizationId: string,
    dataType: DataType,
    values: Record<string, unknown>,
    previous?: Record<string, unknown>,
  ) => relationTargetIssues({ store, entities }, organizationId, dataType, values, previous);

  /** Runs every rule on a record to be written and returns it with its index; throws the 400. */
  async function prepare(
    caller: Caller,
    type: ResolvedType,
    draft: {
      _id: string;
      dataId: unknown;
      hubId: string | null | undefined;
      sent: Record<string, unknown>;
      createdBy?: string | undefined;
      previousValues?: Record<string, unknown>;
    },
  ) {
    const { dataType } = type;
    const issues: FieldIssue[] = [];
    const title = titleProblem(draft.dataId, dataType.titleRule);
    if (title) issues.push({ field: "dataId", message: title });
    issues.push(...hubIssues(caller, dataType, draft.hubId));
    const checked = checkRecordValues(dataType, draft.sent);
    issues.push(...checked.issues);
    if (issues.length > 0) throw new ValidationError(issues);
    const dataId = draft.dataId as string;
    const hubId = dataType.commonData ? null : (draft.hubId as string);
    const scope = hubId ?? COMMON_SCOPE;
    const index = {
      guards: uniqueGuards(dataType, checked.values, scope),
      tokens: [...searchTokens(dataType, dataId, checked.values).keys()],
      links: relationLinks(dataType, checked.values),
    };
    // DynamoDB refuses items over 400 KB: answer a 400 before any write (also when PUT/PATCH grow a record).
    const time = formatDateTimeUtc(now());
    const bytes = estimatedItemBytes({
      _id: draft._id,
      dataId,
      dataTypeId: dataType._id,
      hubId,
      values: checked.values,
      index,
      organizationId: caller.organizationId,
      createdBy: draft.createdBy ?? caller.userId,
      updatedBy: caller.userId,
      createdTime: time,
      updatedTime: time,
    });
    if (bytes > MAX_RECORD_BYTES) {
      throw ValidationError.single(
        "body",
        `the record would take about ${Math.ceil(bytes / 1024)} KB stored (UTF-8), more than the ${MAX_RECORD_BYTES / 1024} KB a record may hold (DynamoDB's item limit is 400 KB); shorten or clear some values`,
      );
    }
    const relationProblems = await relationIssues(caller.organizationId, dataType, checked.values, draft.previousValues);
    if (relationProblems.length > 0) throw new ValidationError(relationProblems);
    return { dataId, hubId, values: checked.values, index };
  }

  async function resolveRelations(caller: Caller, dataType: DataType, record: StoredRecord, projection: Projection) {
    const wanted = (id: string) => !projection.hidden.has(id) && (projection.fields === undefined || projection.fields.includes(id));
    const resolved: Record<string, unknown> = {};
    await Promise.all(
      dataType.fields
        .filter((field) => isReadOnlyField(field) && wanted(field.id))
        .map(async (field) => {
          const relation = field.relation;
          if (!relation?.via) return;
          const ids = await store.linkedIds(
            caller.organizationId,
            record._id,
            relation.target,
            relation.via,
            relation.kind === "hasOne" ? 1 : MAX_RESOLVED_RELATIONS,
          );
          resolved[field.id] = relation.kind === "hasOne" ? (ids[0] ?? null) : ids;
        }),
    );
    return resolved;
  }

  async function view(caller: Caller, dataType: DataType, record: StoredRecord, projection: Projection) {
    return buildView(dataType, record, await resolveRelations(caller, dataType, record, projection), projection);
  }

  const visibleTo = (caller: Caller, hubScope: string) => hubScope === COMMON_SCOPE || callerMayUseHub(caller, hubScope);

  /** The one record of `dataType` with this dataId the caller can see (400 when several hubs hold it and no hubId is given). */
  async function findInType(caller: Caller, dataType: DataType, dataId: string, hubId: string | undefined): Promise<VersionedRecord> {
    let scope: string | undefined = dataType.commonData ? COMMON_SCOPE : hubId;
    if (scope === undefined) {
      const hubs = (await store.locate(caller.organizationId, dataId)).filter(
        (location) => location.dataTypeId === dataType._id && visibleTo(caller, location.hubScope),
      );
      if (hubs.length > 1) {
        throw ValidationError.single(
          "hubId",
          `dataId "${dataId}" exists in several hubs of this data type (${hubs.map((hub) => hub.hubScope).join(", ")}); send hubId`,
        );
      }
      scope = hubs[0]?.hubScope;
    }
    if (scope === undefined || !visibleTo(caller, scope)) throw new NotFoundError();
    const found = await store.find(caller.organizationId, { dataTypeId: dataType._id, hubScope: scope, dataId });
    if (!found) throw new NotFoundError();
    return found;
  }

  // ---------------------------------------------------------------- external-api types

  /** Items of an external-api type, validated against it; invalid items are left out. */
  async function externalRecords(caller: Caller, dataType: DataType): Promise<StoredRecord[]> {
    if (!dataType.providerConfig) return [];
    const items = await external.fetchItems(dataType.providerConfig);
    const fetchedAt = formatDateTimeUtc(now());
    const records: StoredRecord[] = [];
    const ignoredKeys = new Set([...systemViewKeys, "updatedBy"]);
    for (const item of items) {
      if (typeof item !== "object" || item === null || Array.isArray(item)) continue;
      const raw = item as Record<string, unknown>;
      if (titleProblem(raw.dataId, "words")) continue;
      const hubId = typeof raw.hubId === "string" && !dataType.commonData ? raw.hubId : null;
      if (!dataType.commonData && hubId === null) continue;
      const fieldIds = new Set(dataType.fields.map((field) => field.id));
      const sent = Object.fromEntries(
        Object.entries(raw).filter(([key]) => !ignoredKeys.has(key) && fieldIds.has(key) && key !== "dataId"),
      );
      const checked = checkRecordValues(dataType, sent);
      if (checked.issues.length > 0) continue;
      const dataId = raw.dataId as string;
      const time = (value: unknown) =>
        typeof value === "string" && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(value) ? value : fetchedAt;
      records.push({
        _id:
          typeof raw._id === "string" && ID_PATTERN.test(raw._id)
            ? raw._id
            : createHash("sha256")
                .update(`${dataType._id}\u0000${hubId ?? ""}\u0000${dataId}`)
                .digest("hex")
                .slice(0, 24),
        dataId,
        dataTypeId: dataType._id,
        hubId,
        values: checked.values,
        index: { guards: [], tokens: [...searchTokens(dataType, dataId, checked.values).keys()], links: [] },
        organizationId: caller.organizationId,
        createdBy: "external-api",
        updatedBy: "external-api",
        createdTime: time(raw.createdTime),
        updatedTime: time(raw.updatedTime),
      });
    }
    return records;
  }

  function externalCursor(dataTypeId: string, offset: number) {
    return Buffer.from(JSON.stringify({ ext: dataTypeId, offset }), "utf8").toString("base64url");
  }

  function externalOffset(dataTypeId: string, cursor: string | undefined): number {
    if (cursor === undefined) return 0;
    try {
      const decoded = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { ext?: unknown; offset?: unknown };
      if (decoded.ext === dataTypeId && Number.isInteger(decoded.offset) && (decoded.offset as number) >= 0)
        return decoded.offset as number;
    } catch {
      // fall through to the 400
    }
    throw ValidationError.single("cursor", "cursor is not a cursor returned by this list");
  }

  async function listExternal(
    caller: Caller,
    dataType: DataType,
    query: RecordListQuery,
    projection: Projection,
    search: ReturnType<typeof parseSearch>,
  ) {
    const matching = (await externalRecords(caller, dataType)).filter((record) => {
      const scope = hubScopeOf(record);
      if (!visibleTo(caller, scope)) return false;
      if (query.hubId !== undefined && !dataType.commonData && scope !== query.hubId) return false;
      if (!search) return true;
      const tokens = searchTokens(dataType, record.dataId, record.values);
      const first = [...tokens.keys()].filter((token) => token.startsWith(search.indexWord)).sort()[0];
      return first !== undefined && isReportedHit(tokens, search, first, projection.hidden);
    });
    const offset = externalOffset(dataType._id, query.cursor);
    const page = matching.slice(offset, offset + query.limit);
    const nextCursor = offset + query.limit < matching.length ? externalCursor(dataType._id, offset + query.limit) : null;
    return { items: await Promise.all(page.map((record) => view(caller, dataType, record, projection))), nextCursor };
  }

  async function getExternal(caller: Caller, dataType: DataType, dataId: string, hubId: string | undefined, projection: Projection) {
    const found = (await externalRecords(caller, dataType)).filter(
      (record) =>
        record.dataId === dataId &&
        visibleTo(caller, hubScopeOf(record)) &&
        (hubId === undefined || dataType.commonData || record.hubId === hubId),
    );
    if (found.length > 1)
      throw ValidationError.single(
        "hubId",
        `dataId "${dataId}" exists in several hubs of this data type (${found.map((record) => record.hubId).join(", ")}); send hubId`,
      );
    const record = found[0];
    if (!record) throw new NotFoundError();
    return view(caller, dataType, record, projection);
  }

  // ---------------------------------------------------------------- search without a type

  /**
   * GET /data?q= without a data type: the organization-wide token index (stored types; external-api
   * types have no stored records and extension types no records at all). Each result is reported
   * by the rules of its own type: prefix words, hidden fields, hub scope. `fields` is not checked
   * against a type; naming a field any view/data entry of the token hides is a 403.
   */
  /** `fields` of a list across types: not checked against a type; a field any view/data entry of the token hides is a 403. */
  function fieldsAcrossTypes(caller: Caller, query: RecordListQuery): string[] | undefined {
    let fields: string[] | undefined;
    if (query.fields !== undefined) {
      const names = [
        ...new Set(
          query.fields
            .split(",")
            .map((name) => name.trim())
            .filter((name) => name !== ""),
        ),
      ];
      if (names.length === 0) throw ValidationError.single("fields", "name at least one field");
      const hiddenAnywhere = new Set(
        caller.permissionDetails.filter((detail) => detail.permissionName === "view/data").flatMap((detail) => detail.hiddenFields ?? []),
      );
      const restricted = names.filter((name) => hiddenAnywhere.has(name) && name !== "_id" && name !== "dataId");
      if (restricted.length > 0) throw recordErrors.restrictedFields(restricted);
      // Items of several types: each says which type it is.
      fields = [...new Set([...names, "dataTypeId", "data_type"])];
    }
    return fields;
  }

  /** The hub scopes a list across types keeps (the given hubId, else the token's hubs; common records always), or undefined for all. */
  function hubScopesAcrossTypes(caller: Caller, query: RecordListQuery): string[] | undefined {
    if (query.hubId !== undefined && !callerMayUseHub(caller, query.hubId))
      throw ValidationError.single("hubId", "hubId must be one of the hubs your token allows");
    return query.hubId !== undefined ? [query.hubId] : caller.hubIds.length > 0 ? caller.hubIds : undefined;
  }

  /** The data types of a page's records, by id (a type deleted since is absent). */
  async function typesOf(caller: Caller, records: readonly StoredRecord[]): Promise<Map<string, DataType>> {
    const typeIds = [...new Set(records.map((record) => record.dataTypeId))];
    const types = new Map<string, DataType>();
    for (const found of await Promise.all(typeIds.map((id) => dataTypes.findById(caller.organizationId, id)))) {
      if (found) types.set(found.dataType._id, found.dataType);
    }
    return types;
  }

  /**
   * GET /data with neither a type nor q: the organization's stored records of every type, newest
   * first (one index read per page, store.listOrganization); each item says its type and follows
   * its own type's hidden fields; hub scope as the typed list's.
   */
  async function listAcrossTypes(caller: Caller, query: RecordListQuery) {
    const fields = fieldsAcrossTypes(caller, query);
    const page = await store.listOrganization(caller.organizationId, {
      hubScopes: hubScopesAcrossTypes(caller, query),
      limit: query.limit,
      cursor: query.cursor,
    });
    const types = await typesOf(caller, page.items);
    const items = page.items.flatMap((record) => {
      const dataType = types.get(record.dataTypeId);
      if (!dataType || !visibleTo(caller, hubScopeOf(record))) return [];
      return [{ dataType, record, projection: { hidden: hiddenFieldsFor(caller, dataType._id), fields } satisfies Projection }];
    });
    return {
      items: await Promise.all(items.map((item) => view(caller, item.dataType, item.record, item.projection))),
      nextCursor: page.nextCursor,
    };
  }

  async function searchAcrossTypes(caller: Caller, query: RecordListQuery) {
    const search = parseSearch(query.q ?? "");
    if (!search) throw ValidationError.single("q", "q must contain at least one letter or digit");
    const fields = fieldsAcrossTypes(caller, query);
    const hubScopes = hubScopesAcrossTypes(caller, query);
    const page = await store.searchOrganization(caller.organizationId, {
      indexWord: search.indexWord,
      hubScopes,
      limit: query.limit,
      cursor: query.cursor,
    });
    const types = await typesOf(
      caller,
      page.hits.map((hit) => hit.record),
    );
    const items = page.hits.flatMap((hit) => {
      const dataType = types.get(hit.record.dataTypeId);
      if (!dataType || !visibleTo(caller, hubScopeOf(hit.record))) return [];
      const hidden = hiddenFieldsFor(caller, dataType._id);
      if (!isReportedHit(searchTokens(dataType, hit.record.dataId, hit.record.values), search, hit.token, hidden)) return [];
      return [{ dataType, record: hit.record, projection: { hidden, fields } satisfies Projection }];
    });
    return {
      items: await Promise.all(items.map((item) => view(caller, item.dataType, item.record, item.projection))),
      nextCursor: page.nextCursor,
    };
  }

  // ---------------------------------------------------------------- writes

  async function findForWrite(caller: Caller, dataTypeName: string, dataId: string, hubId: string | undefined) {
    const type = await resolveType(caller.organizationId, { dataTypeName }, "404");
    assertWritable(type.dataType);
    return { type, existing: await findInType(caller, type.dataType, dataId, hubId) };
  }

  function assertSameType(type: ResolvedType, body: RecordReplaceInput): void {
    if (body.dataTypeId !== undefined && body.dataTypeId !== type.dataType._id)
      throw ValidationError.single("dataTypeId", "must be the data type of the path (a record cannot change its data type)");
    if (body.dataTypeName !== undefined && body.dataTypeName.toLowerCase() !== type.dataType.name.toLowerCase()) {
      throw ValidationError.single("dataTypeName", "must be the data type of the path (a record cannot change its data type)");
    }
  }

  /** The record read, its version checked against If-Match (and kept for the ETag). */
  function checked(found: VersionedRecord, versions: VersionCondition | undefined): StoredRecord {
    versions?.check(found.version);
    return found.record;
  }

  async function write(
    caller: Caller,
    type: ResolvedType,
    existing: VersionedRecord,
    body: RecordReplaceInput,
    sent: Record<string, unknown>,
    versions?: VersionCondition,
  ) {
    assertSameType(type, body);
    const previous = existing.record;
    const prepared = await prepare(caller, type, {
      _id: previous._id,
      dataId: body.dataId ?? previous.dataId,
      hubId: body.hubId === undefined ? previous.hubId : body.hubId,
      sent,
      createdBy: previous.createdBy,
      previousValues: previous.values,
    });
    const next: StoredRecord = { ...previous, ...prepared, updatedBy: caller.userId, updatedTime: formatDateTimeUtc(now()) };
    await writeUnder(
      versions,
      () =>
        store.replace(next, existing, {
          dataTypeVersion: type.version,
          hubToCheck: next.hubId !== null && next.hubId !== previous.hubId ? next.hubId : undefined,
          commonData: type.dataType.commonData,
        }),
      existing.version + 1,
    );
    return view(caller, type.dataType, next, writeProjection(caller, type.dataType));
  }

  return {
    async create(caller: Caller, body: RecordCreateInput) {
      const type = await resolveType(caller.organizationId, body, "400");
      assertWritable(type.dataType);
      const time = now();
      const _id = newId(time);
      const prepared = await prepare(caller, type, { _id, dataId: body.dataId, hubId: body.hubId, sent: splitEnvelope(body) });
      const record: StoredRecord = {
        _id,
        dataId: prepared.dataId,
        dataTypeId: type.dataType._id,
        hubId: prepared.hubId,
        values: prepared.values,
        index: prepared.index,
        organizationId: caller.organizationId,
        createdBy: caller.userId,
        updatedBy: caller.userId,
        createdTime: formatDateTimeUtc(time),
        updatedTime: formatDateTimeUtc(time),
      };
      await store.create(record, {
        dataTypeVersion: type.version,
        hubToCheck: record.hubId ?? undefined,
        commonData: type.dataType.commonData,
      });
      return view(caller, type.dataType, record, writeProjection(caller, type.dataType));
    },

    async list(caller: Caller, query: RecordListQuery) {
      if (query.dataTypeId === undefined && query.dataTypeName === undefined)
        return query.q !== undefined ? searchAcrossTypes(caller, query) : listAcrossTypes(caller, query);
      const { dataType } = await resolveType(caller.organizationId, query, "404");
      const projection = projectionFor(caller, dataType, query.fields);
      if (query.hubId !== undefined && !dataType.commonData && !callerMayUseHub(caller, query.hubId)) {
        throw ValidationError.single("hubId", "hubId must be one of the hubs your token allows");
      }
      // A q without letters or digits would match everything: a 400 for stored and external types alike.
      const search = query.q !== undefined ? parseSearch(query.q) : undefined;
      if (query.q !== undefined && !search) throw ValidationError.single("q", "q must contain at least one letter or digit");
      if (dataType.provider === "external-api") return listExternal(caller, dataType, query, projection, search);
      const scope: ScopeFilter = dataType.commonData
        ? {}
        : { hubScope: query.hubId, allowedHubScopes: query.hubId === undefined && caller.hubIds.length > 0 ? caller.hubIds : undefined };
      if (search) {
        const page = await store.search(caller.organizationId, dataType._id, {
          ...scope,
          indexWord: search.indexWord,
          limit: query.limit,
          cursor: query.cursor,
        });
        const reported = page.hits.filter((hit) =>
          isReportedHit(searchTokens(dataType, hit.record.dataId, hit.record.values), search, hit.token, projection.hidden),
        );
        return {
          items: await Promise.all(reported.map((hit) => view(caller, dataType, hit.record, projection))),
          nextCursor: page.nextCursor,
        };
      }
      const page = await store.list(caller.organizationId, dataType._id, { ...scope, limit: query.limit, cursor: query.cursor });
      return {
        items: await Promise.all(page.items.map((record) => view(caller, dataType, record, projection))),
        nextCursor: page.nextCursor,
      };
    },

    /** GET /data/{dataId}: the type may be left out when only one type (and hub) holds the dataId. */
    async getByDataId(caller: Caller, dataId: string, query: RecordGetQuery, versions?: VersionCondition) {
      if (query.dataTypeId !== undefined || query.dataTypeName !== undefined) {
        const { dataType } = await resolveType(caller.organizationId, query, "404");
        const projection = projectionFor(caller, dataType, query.fields);
        if (dataType.provider === "external-api") return getExternal(caller, dataType, dataId, query.hubId, projection);
        return view(caller, dataType, checked(await findInType(caller, dataType, dataId, query.hubId), versions), projection);
      }
      const locations = (await store.locate(caller.organizationId, dataId)).filter(
        (location) =>
          visibleTo(caller, location.hubScope) &&
          (query.hubId === undefined || location.hubScope === query.hubId || location.hubScope === COMMON_SCOPE),
      );
      const typeIds = [...new Set(locations.map((location) => location.dataTypeId))];
      if (typeIds.length === 0) throw new NotFoundError();
      if (typeIds.length > 1) {
        const types = await Promise.all(typeIds.map((id) => dataTypes.findById(caller.organizationId, id)));
        const names = types.flatMap((type) => (type ? [`${type.dataType.name} (${type.dataType._id})`] : []));
        throw ValidationError.single(
          "dataTypeId",
          `dataId "${dataId}" exists in several data types: ${names.join(", ")}; send dataTypeId or dataTypeName`,
        );
      }
      const type = await dataTypes.findById(caller.organizationId, typeIds[0] as string);
      if (!type) throw new NotFoundError();
      const projection = projectionFor(caller, type.dataType, query.fields);
      return view(caller, type.dataType, checked(await findInType(caller, type.dataType, dataId, query.hubId), versions), projection);
    },

    async getByTypeName(
      caller: Caller,
      dataTypeName: string,
      dataId: string,
      query: { hubId?: string | undefined; fields?: string | undefined },
      versions?: VersionCondition,
    ) {
      const { dataType } = await resolveType(caller.organizationId, { dataTypeName }, "404");
      const projection = projectionFor(caller, dataType, query.fields);
      if (dataType.provider === "external-api") return getExternal(caller, dataType, dataId, query.hubId, projection);
      return view(caller, dataType, checked(await findInType(caller, dataType, dataId, query.hubId), versions), projection);
    },

    /**
     * PUT: the whole record; omitted fields are cleared (or take their default), omitted dataId/hubId
     * are kept — except fields hidden from the caller: a caller who cannot read a value cannot send it
     * back, so an omitted hidden field keeps its stored value (sending it, null included, still writes it).
     */
    async replace(
      caller: Caller,
      dataTypeName: string,
      dataId: string,
      hubId: string | undefined,
      body: RecordReplaceInput,
      versions?: VersionCondition,
    ) {
      const { type, existing } = await findForWrite(caller, dataTypeName, dataId, hubId);
      versions?.check(existing.version);
      const sent = splitEnvelope(body);
      const hidden = hiddenFieldsFor(caller, type.dataType._id);
      const writable = writableKeys(type.dataType);
      const keptHidden = Object.fromEntries(
        Object.entries(existing.record.values).filter(([key]) => hidden.has(key) && writable.has(key) && !Object.hasOwn(sent, key)),
      );
      return write(caller, type, existing, body, { ...keptHidden, ...sent }, versions);
    },

    /** PATCH: sent keys replace the stored values (null clears); the merged record is checked as a whole. */
    async patch(
      caller: Caller,
      dataTypeName: string,
      dataId: string,
      hubId: string | undefined,
      body: RecordReplaceInput,
      versions?: VersionCondition,
    ) {
      if (Object.keys(body).length === 0) throw ValidationError.single("body", "send at least one field to change");
      const { type, existing } = await findForWrite(caller, dataTypeName, dataId, hubId);
      versions?.check(existing.version);
      const writable = writableKeys(type.dataType);
      const kept = Object.fromEntries(Object.entries(existing.record.values).filter(([key]) => writable.has(key)));
      // A sent null clears the value (then the default applies, or required fails); an absent key keeps it.
      return write(caller, type, existing, body, { ...kept, ...splitEnvelope(body) }, versions);
    },

    /**
     * The legacy import's write (shared/domain/data-types/import-service.ts): the record of one export
     * line, under every rule of a create, into the type the import holds locked. Conditional on
     * absence: a record already there with this `_id` (a redelivered page) answers "existed"; another
     * record with the dataId or a unique value throws the usual 409.
     */
    async importRecord(
      type: ResolvedType,
      draft: { _id: string; dataId: unknown; hubId: string | null | undefined; values: Record<string, unknown>; createdBy: string },
    ) {
      const { dataType } = type;
      const importer: Caller = {
        userId: draft.createdBy,
        organizationId: dataType.organizationId,
        hubIds: [],
        permissions: new Set(),
        permissionDetails: [],
      };
      const time = formatDateTimeUtc(now());
      const prepared = await prepare(importer, type, { _id: draft._id, dataId: draft.dataId, hubId: draft.hubId, sent: draft.values });
      const record: StoredRecord = {
        _id: draft._id,
        dataId: prepared.dataId,
        dataTypeId: dataType._id,
        hubId: prepared.hubId,
        values: prepared.values,
        index: prepared.index,
        organizationId: dataType.organizationId,
        createdBy: draft.createdBy,
        updatedBy: draft.createdBy,
        createdTime: time,
        updatedTime: time,
      };
      try {
        await store.create(record, {
          dataTypeVersion: type.version,
          hubToCheck: record.hubId ?? undefined,
          commonData: dataType.commonData,
        });
        return "created" as const;
      } catch (error) {
        if ((await store.findById(dataType.organizationId, draft._id)) !== undefined) return "existed" as const;
        throw error;
      }
    },

    /** Rollback of a failed import: deletes up to `limit` records of the type (index items included); answers how many it found (0: none left). */
    async removeSome(organizationId: string, dataTypeId: string, limit: number): Promise<number> {
      const page = await store.list(organizationId, dataTypeId, { limit });
      await Promise.all(
        page.items.map(async (record) => {
          const found = await store.find(organizationId, { dataTypeId, hubScope: hubScopeOf(record), dataId: record.dataId });
          if (found) await store.remove(found);
        }),
      );
      return page.items.length;
    },

    async remove(
      caller: Caller,
      dataTypeName: string,
      dataId: string,
      hubId: string | undefined,
      versions?: VersionCondition,
    ): Promise<void> {
      const { dataType } = await resolveType(caller.organizationId, { dataTypeName }, "404");
      if (dataType.provider === "external-api")
        throw ValidationError.single(
          "dataTypeName",
          "records of an external-api data type are read from its API and cannot be deleted here",
        );
      if (dataType.locked) throw recordErrors.dataTypeLocked();
      const existing = await findInType(caller, dataType, dataId, hubId);
      versions?.check(existing.version);
      await writeUnder(versions, () => store.remove(existing));
    },
  };
}

export type RecordService = ReturnType<typeof createRecordService>;
