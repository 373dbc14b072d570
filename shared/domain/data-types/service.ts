import type { Caller } from "#shared/domain/caller";
import { dataTypeConflicts } from "#shared/domain/data-types/errors";
import { dataTypeIssues, normalizeFields, relationTargetIds } from "#shared/domain/data-types/rules";
import {
  type DataType,
  type DataTypeInput,
  dataTypeInputSchema,
  type DataTypePatch,
  type DataTypeView,
} from "#shared/domain/data-types/schema";
import { maskProviderKey, toDataTypeView } from "#shared/domain/data-types/view";
import { NotFoundError, ValidationError } from "#shared/domain/errors";
import { ID_PATTERN, newId } from "#shared/domain/ids";
import { formatDateTimeUtc } from "#shared/domain/time";
import { parseWith } from "#shared/domain/validation";
import { type VersionCondition, writeUnder } from "#shared/domain/versions";

/** `scheme://host:port` of a URL (default ports left out), or undefined when it does not parse. */
function urlOrigin(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

export interface VersionedDataType {
  dataType: DataType;
  version: number;
}

/** A data type the write read (a relation target) and must still be at that version when the write commits. */
export interface ReadVersion {
  dataTypeId: string;
  version: number;
}

export interface DataTypePage {
  items: DataType[];
  nextCursor: string | null;
}

/**
 * Persistence port of the data type area (DynamoDB implementation: shared/store/data-type-store.ts).
 * Every write is one transaction over the type item, its name guard, its extension guard and a
 * version check of each related data type, so a failed write leaves nothing behind.
 */
export interface DataTypeStore {
  findById(organizationId: string, dataTypeId: string): Promise<VersionedDataType | undefined>;
  /** Case-insensitive exact name, through the name guard item. */
  findByName(organizationId: string, name: string): Promise<VersionedDataType | undefined>;
  /** Throws dataTypeConflicts.nameTaken / extensionTaken / relatedChanged. */
  create(dataType: DataType, related: readonly ReadVersion[]): Promise<void>;
  /** Throws the conflicts above, or the concurrent-update 409 when `previous` is no longer at `expectedVersion`. */
  replace(next: DataType, previous: DataType, expectedVersion: number, related: readonly ReadVersion[]): Promise<void>;
  /** Deletes type and guards unless the type still has records. */
  removeUnlessRecords(dataType: DataType, expectedVersion: number): Promise<"deleted" | "has-records">;
  list(
    organizationId: string,
    filter: { namePrefix?: string | undefined; limit: number; cursor?: string | undefined },
  ): Promise<DataTypePage>;
}

/** At most this many other data types may be named by relation fields (a transaction holds 100 items). */
export const MAX_RELATED_DATA_TYPES = 90;

/** A stored type must fit one DynamoDB item (400 KB) with room for keys and attributes. */
export const MAX_STORED_BYTES = 350_000;

function assertStorable(dataType: DataType): void {
  const bytes = Buffer.byteLength(JSON.stringify(dataType), "utf8");
  if (bytes > MAX_STORED_BYTES) {
    throw ValidationError.single(
      "fields",
      `the data type is too large to store (${bytes} bytes of JSON, at most ${MAX_STORED_BYTES}); shorten descriptions or option lists`,
    );
  }
}

export interface DataTypeServiceOptions {
  now?: () => Date;
  /** Test-only (ALLOW_LOOPBACK_PROVIDERS): lets external-api types point at loopback servers. */
  allowLoopbackProviders?: boolean;
}

const writableAttributes = [
  "name",
  "fields",
  "limitUser",
  "commonData",
  "uniqueTogether",
  "extends",
  "provider",
  "providerConfig",
] as const;

export function createDataTypeService(store: DataTypeStore, options: DataTypeServiceOptions = {}) {
  const now = options.now ?? (() => new Date());

  async function findOwned(organizationId: string, dataTypeId: string): Promise<VersionedDataType> {
    const found = ID_PATTERN.test(dataTypeId) ? await store.findById(organizationId, dataTypeId) : undefined;
    if (!found) throw new NotFoundError();
    return found;
  }

  async function findWritable(caller: Caller, dataTypeId: string): Promise<VersionedDataType> {
    const found = await findOwned(caller.organizationId, dataTypeId);
    if (found.dataType.locked) throw dataTypeConflicts.locked();
    return found;
  }

  /** Loads the relation targets and checks every rule; returns the fields and the versions read. */
  async function validate(organizationId: string, input: DataTypeInput, existing?: DataType) {
    const targetIds = relationTargetIds(input, existing?._id);
    if (targetIds.length > MAX_RELATED_DATA_TYPES) {
      throw ValidationError.single("fields", `relation fields may name at most ${MAX_RELATED_DATA_TYPES} other data types`);
    }
    const loaded = await Promise.all(targetIds.map((id) => store.findById(organizationId, id)));
    const relationTargets = new Map<string, DataType>();
    const related: ReadVersion[] = [];
    for (const found of loaded) {
      if (!found) continue;
      relationTargets.set(found.dataType._id, found.dataType);
      related.push({ dataTypeId: found.dataType._id, version: found.version });
    }
    const issues = dataTypeIssues(input, { existing, relationTargets, allowLoopbackProviders: options.allowLoopbackProviders ?? false });
    if (issues.length > 0) throw new ValidationError(issues);
    return { fields: normalizeFields(input.fields), related };
  }

  /**
   * A client that read the masked key and sends it back unchanged keeps the stored key — but only
   * while the URL stays on the same origin (scheme, host, port): otherwise the stored secret would be
   * sent to a host its owner never gave it to, so the real key must be sent again (400 naming
   * `providerConfig.key` when it is masked or missing).
   */
  function unmaskProviderKey(input: DataTypeInput, existing: DataType): DataTypeInput {
    const storedKey = existing.providerConfig?.key;
    const sentKey = input.providerConfig?.key;
    if (input.provider !== "external-api" || !input.providerConfig || storedKey === undefined || !existing.providerConfig) return input;
    const sentOrigin = urlOrigin(input.providerConfig.url);
    if (sentOrigin === undefined) return input; // the URL rule reports it; nothing is saved
    if (sentOrigin === urlOrigin(existing.providerConfig.url)) {
      return sentKey === maskProviderKey(storedKey) ? { ...input, providerConfig: { ...input.providerConfig, key: storedKey } } : input;
    }
    if (sentKey === undefined || sentKey === maskProviderKey(storedKey)) {
      throw ValidationError.single(
        "providerConfig.key",
        "providerConfig.key must be sent again in full when providerConfig.url moves to another origin (scheme, host or port); the stored key is only kept for its own origin.",
      );
    }
    return input;
  }

  function attributes(input: DataTypeInput, fields: DataType["fields"], commonData: boolean) {
    return {
      name: input.name,
      fields,
      limitUser: input.limitUser,
      commonData: input.extends !== null ? true : commonData,
      uniqueTogether: input.uniqueTogether,
      extends: input.extends,
      provider: input.provider,
      providerConfig:
        input.provider === "external-api" && input.providerConfig
          ? { url: input.providerConfig.url, ...(input.providerConfig.key !== undefined ? { key: input.providerConfig.key } : {}) }
          : null,
    };
  }

  async function write(
    caller: Caller,
    existing: VersionedDataType,
    rawInput: DataTypeInput,
    versions?: VersionCondition,
  ): Promise<DataTypeView> {
    const input = unmaskProviderKey(rawInput, existing.dataType);
    const { fields, related } = await validate(caller.organizationId, input, existing.dataType);
    const next: DataType = {
      ...existing.dataType,
      ...attributes(input, fields, existing.dataType.commonData),
      // The first save through this API ends the earlier version's no-space title rule.
      titleRule: "words",
      updatedTime: formatDateTimeUtc(now()),
    };
    assertStorable(next);
    await writeUnder(versions, () => store.replace(next, existing.dataType, existing.version, related), existing.version + 1);
    return toDataTypeView(next);
  }

  return {
    async create(caller: Caller, input: DataTypeInput): Promise<DataTypeView> {
      const { fields, related } = await validate(caller.organizationId, input);
      const time = now();
      const dataType: DataType = {
        _id: newId(time),
        ...attributes(input, fields, input.commonData ?? false),
        locked: false,
        titleRule: "words",
        createdBy: caller.userId,
        organizationId: caller.organizationId,
        createdTime: formatDateTimeUtc(time),
        updatedTime: formatDateTimeUtc(time),
      };
      assertStorable(dataType);
      await store.create(dataType, related);
      return toDataTypeView(dataType);
    },

    async get(caller: Caller, dataTypeId: string, versions?: VersionCondition): Promise<DataTypeView> {
      const found = await findOwned(caller.organizationId, dataTypeId);
      versions?.check(found.version);
      return toDataTypeView(found.dataType);
    },

    async list(caller: Caller, query: { name?: string | undefined; limit: number; cursor?: string | undefined }) {
      const page = await store.list(caller.organizationId, { namePrefix: query.name, limit: query.limit, cursor: query.cursor });
      return { items: page.items.map(toDataTypeView), nextCursor: page.nextCursor };
    },

    /** Full replace: omitted optional attributes take their defaults, except commonData (immutable, kept). */
    async replace(caller: Caller, dataTypeId: string, input: DataTypeInput, versions?: VersionCondition): Promise<DataTypeView> {
      const existing = await findWritable(caller, dataTypeId);
      versions?.check(existing.version);
      return write(caller, existing, input, versions);
    },

    /** Top-level attributes sent replace the stored ones (`fields` as a whole); the result is validated as a whole. */
    async patch(caller: Caller, dataTypeId: string, patch: DataTypePatch, versions?: VersionCondition): Promise<DataTypeView> {
      const existing = await findWritable(caller, dataTypeId);
      versions?.check(existing.version);
      const current = Object.fromEntries(writableAttributes.map((attribute) => [attribute, existing.dataType[attribute]]));
      const merged = parseWith(dataTypeInputSchema, { ...current, ...patch });
      return write(caller, existing, merged, versions);
    },

    async remove(caller: Caller, dataTypeId: string, versions?: VersionCondition): Promise<void> {
      const existing = await findWritable(caller, dataTypeId);
      versions?.check(existing.version);
      if ((await writeUnder(versions, () => store.removeUnlessRecords(existing.dataType, existing.version))) === "has-records")
        throw dataTypeConflicts.hasRecords();
    },
  };
}

export type DataTypeService = ReturnType<typeof createDataTypeService>;

/** Read access for other areas (records): the stored data type, provider key in clear, or undefined. */
export function createDataTypeReader(store: Pick<DataTypeStore, "findById" | "findByName">) {
  return {
    findById: (organizationId: string, dataTypeId: string) =>
      ID_PATTERN.test(dataTypeId) ? store.findById(organizationId, dataTypeId) : Promise.resolve(undefined),
    findByName: (organizationId: string, name: string) => store.findByName(organizationId, name.trim().normalize()),
  };
}
