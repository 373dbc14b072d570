import type { Caller } from "#shared/domain/caller";
import type { DataType, StandardEntity } from "#shared/domain/data-types/schema";
import { type FieldIssue, NotFoundError, ValidationError } from "#shared/domain/errors";
import { extensionErrors } from "#shared/domain/extensions/errors";
import type { ExtensionValuesInput, ExtensionValuesView, IdentityEntity, StoredCustomValues } from "#shared/domain/extensions/schema";
import { hiddenFieldsFor, uniqueGuards } from "#shared/domain/records/rules";
import { type EntityLookup, type RecordStore, relationTargetIssues } from "#shared/domain/records/service";
import { estimatedValueBytes } from "#shared/domain/records/size";
import { checkRecordValues, isReadOnlyField, isTitleField, ownValue } from "#shared/domain/records/values";
import { formatDateTimeUtc } from "#shared/domain/time";

/**
 * Custom values of platform entities, checked by the records' own rules (values.ts: types,
 * validations, defaults, required, unknown keys; rules.ts: uniqueness guards, hidden fields;
 * relation targets like a record's). Pure but for the lookups: the entity stores write the values
 * and move the guards in the entity's own transaction (shared/store/extension-store.ts).
 *
 * Values are tied to the extension type `_id` they were checked against. Reads show only the
 * values of fields the current extension type still has; values of removed fields (or of a type
 * that was deleted or now extends another entity) stay stored, unshown, until the entity's custom
 * values are next written, which drops them and releases their uniqueness claims (docs/api/extensions.md).
 */

export interface ExtensionType {
  dataType: DataType;
  version: number;
}

export interface ExtensionTypeLookup {
  /**
   * The organization's extension data type for the entity (the one whose `extends` names it), or
   * undefined. `consistent: false` (reads only) may miss a type created or deleted a moment ago.
   */
  find(organizationId: string, entity: StandardEntity, options?: { consistent: boolean }): Promise<ExtensionType | undefined>;
}

/** Custom values to store, and the extension type version they were checked against (the write's transaction checks it). */
export interface CustomValuesWrite {
  next: StoredCustomValues;
  typeVersion: number;
}

/**
 * - `create`: `custom` absent is `{}` (defaults apply, required fields are reported);
 * - `replace` (PUT): absent keeps the stored values; present is the whole object (fields hidden from the caller that it omits keep their values);
 * - `patch`: absent keeps the stored values; present keys replace stored ones (null clears); the merge is checked as a whole.
 */
export type CustomWriteMode = "create" | "replace" | "patch";

/** Custom values may take this much of the entity's item (estimated as DynamoDB counts). */
export const MAX_CUSTOM_VALUE_BYTES = 100 * 1024;

/** A write holds the entity, its hub counters, the type check and the guards: keep guards well inside 100 items. */
export const MAX_CUSTOM_GUARDS = 60;

export interface CustomValuesDependencies {
  extensionTypes: ExtensionTypeLookup;
  /** Relation targets of belongsTo/belongsToMany fields are checked like a record's. */
  relations: { store: Pick<RecordStore, "findById">; entities: EntityLookup };
}

const writableFieldIds = (dataType: DataType) =>
  new Set(dataType.fields.filter((field) => !isTitleField(field) && !isReadOnlyField(field)).map((field) => field.id));

const pick = (values: Record<string, unknown>, keep: (key: string) => boolean) =>
  Object.fromEntries(Object.entries(values).filter(([key]) => keep(key)));

/** The records' issues under `custom.`, each a sentence whose subject is the field (`custom.vin is required.`). */
const underCustom = (issues: FieldIssue[], prefix: string): FieldIssue[] =>
  issues.map((issue) => {
    const field = `${prefix}.${issue.field}`;
    const text = issue.message.replace(/[.]$/, "");
    return { field, message: /^[a-z]/.test(text) ? `${field} ${text}.` : `${text}.` };
  });

export function createCustomValues(dependencies: CustomValuesDependencies) {
  const { extensionTypes, relations } = dependencies;

  return {
    typeFor: (organizationId: string, entity: StandardEntity, options?: { consistent: boolean }) =>
      extensionTypes.find(organizationId, entity, options),

    /**
     * Checks the `custom` of an entity write against the extension type; undefined when the write
     * leaves the custom values as they are. Throws the 400 naming `custom.<field>` (or `custom`).
     */
    async prepare(
      caller: Caller,
      entity: StandardEntity,
      type: ExtensionType | undefined,
      current: StoredCustomValues | undefined,
      sent: Record<string, unknown> | undefined,
      mode: CustomWriteMode,
      field = "custom",
    ): Promise<CustomValuesWrite | undefined> {
      if (sent === undefined && mode !== "create") return undefined;
      if (!type) {
        if (sent === undefined || Object.keys(sent).length === 0) return undefined;
        throw extensionErrors.noExtensionType(entity, field);
      }
      const { dataType } = type;
      // Values checked against another type (deleted, or now extending another entity) are not carried over.
      const stored = current?.dataTypeId === dataType._id ? current.values : {};
      const writable = writableFieldIds(dataType);
      let merged: Record<string, unknown>;
      if (mode === "patch") merged = { ...pick(stored, (key) => writable.has(key)), ...sent };
      else if (mode === "replace") {
        const body = sent ?? {};
        const hidden = hiddenFieldsFor(caller, dataType._id);
        merged = { ...pick(stored, (key) => hidden.has(key) && writable.has(key) && !Object.hasOwn(body, key)), ...body };
      } else merged = sent ?? {};
      const checked = checkRecordValues(dataType, merged);
      if (checked.issues.length > 0) throw new ValidationError(underCustom(checked.issues, field));
      const bytes = estimatedValueBytes(checked.values);
      if (bytes > MAX_CUSTOM_VALUE_BYTES) {
        throw ValidationError.single(
          field,
          `custom values would take about ${Math.ceil(bytes / 1024)} KB stored, more than ${MAX_CUSTOM_VALUE_BYTES / 1024} KB; shorten or clear some values`,
        );
      }
      const relationProblems = await relationTargetIssues(relations, caller.organizationId, dataType, checked.values, stored);
      if (relationProblems.length > 0) throw new ValidationError(underCustom(relationProblems, field));
      // Claims are scoped by entity, so a type that moves to another entity never clashes with its old values' claims.
      const guards = uniqueGuards(dataType, checked.values, entity);
      if (guards.length > MAX_CUSTOM_GUARDS) {
        throw ValidationError.single(
          field,
          `these values need ${guards.length} uniqueness claims in one transaction; at most ${MAX_CUSTOM_GUARDS}: clear some unique values`,
        );
      }
      return { next: { dataTypeId: dataType._id, values: checked.values, guards }, typeVersion: type.version };
    },

    /** `custom` as answered: undefined without an extension type; else its fields' values minus the caller's hidden fields. */
    view(caller: Caller, type: ExtensionType | undefined, stored: StoredCustomValues | undefined): Record<string, unknown> | undefined {
      if (!type) return undefined;
      const { dataType } = type;
      const hidden = hiddenFieldsFor(caller, dataType._id);
      const values = stored?.dataTypeId === dataType._id ? stored.values : {};
      const shown: Record<string, unknown> = {};
      for (const field of dataType.fields) {
        if (isTitleField(field) || isReadOnlyField(field) || hidden.has(field.id)) continue;
        const value = ownValue(values, field.id);
        if (value !== undefined) shown[field.id] = value;
      }
      return shown;
    },
  };
}

export type CustomValues = ReturnType<typeof createCustomValues>;

/** The custom values of an identity-provider entity (user, role, flow), one item per entity id. */
export interface StoredEntityExtension {
  entity: IdentityEntity;
  entityId: string;
  organizationId: string;
  custom: StoredCustomValues;
  createdBy: string;
  updatedBy: string;
  createdTime: string;
  updatedTime: string;
}

/** Persistence port (shared/store/extension-store.ts). */
export interface EntityExtensionStore {
  find(
    organizationId: string,
    entity: IdentityEntity,
    entityId: string,
  ): Promise<{ item: StoredEntityExtension; version: number } | undefined>;
  /**
   * One transaction: the item (conditional on `previous`'s version, or on being new), the guard
   * moves and a check of the extension type at `typeVersion`. Throws ext-001 (a unique value is
   * taken), data-003 (the type changed), sys-410 (the item changed meanwhile).
   */
  put(
    next: StoredEntityExtension,
    previous: { item: StoredEntityExtension; version: number } | undefined,
    typeVersion: number,
  ): Promise<void>;
}

/** `PUT/GET /extension/{entity}/{entityId}` for the entities this service does not store. */
export function createEntityExtensionService(dependencies: { custom: CustomValues; store: EntityExtensionStore; now?: () => Date }) {
  const { custom, store } = dependencies;
  const now = dependencies.now ?? (() => new Date());

  const toView = (caller: Caller, type: ExtensionType | undefined, item: StoredEntityExtension): ExtensionValuesView => ({
    entity: item.entity,
    entityId: item.entityId,
    dataTypeId: type?.dataType._id ?? item.custom.dataTypeId,
    custom: custom.view(caller, type, item.custom) ?? {},
    organizationId: item.organizationId,
    createdBy: item.createdBy,
    updatedBy: item.updatedBy,
    createdTime: item.createdTime,
    updatedTime: item.updatedTime,
  });

  return {
    /** 404 when no values were ever stored for this id in the caller's organization, or it has no extension type for the entity. */
    async get(caller: Caller, entity: IdentityEntity, entityId: string): Promise<ExtensionValuesView> {
      const [type, found] = await Promise.all([
        custom.typeFor(caller.organizationId, entity),
        store.find(caller.organizationId, entity, entityId),
      ]);
      if (!found || !type) throw new NotFoundError();
      return toView(caller, type, found.item);
    },

    /** Creates or replaces the entity's custom values (PUT semantics). */
    async put(
      caller: Caller,
      entity: IdentityEntity,
      entityId: string,
      body: ExtensionValuesInput,
    ): Promise<{ created: boolean; view: ExtensionValuesView }> {
      const type = await custom.typeFor(caller.organizationId, entity);
      if (!type) throw extensionErrors.noExtensionType(entity, "entity");
      const previous = await store.find(caller.organizationId, entity, entityId);
      const write = await custom.prepare(caller, entity, type, previous?.item.custom, body.custom, "replace");
      if (!write) throw extensionErrors.noExtensionType(entity, "entity");
      const time = formatDateTimeUtc(now());
      const next: StoredEntityExtension = {
        entity,
        entityId,
        organizationId: caller.organizationId,
        custom: write.next,
        createdBy: previous?.item.createdBy ?? caller.userId,
        updatedBy: caller.userId,
        createdTime: previous?.item.createdTime ?? time,
        updatedTime: time,
      };
      await store.put(next, previous, write.typeVersion);
      return { created: previous === undefined, view: toView(caller, type, next) };
    },
  };
}

export type EntityExtensionService = ReturnType<typeof createEntityExtensionService>;
