import type { FieldIssue } from "#shared/domain/errors";
import { ID_PATTERN } from "#shared/domain/ids";
import {
  type DataType,
  type DataTypeInput,
  type Field,
  type FieldInput,
  type FieldType,
  MAX_SEARCHABLE_FIELDS,
  standardEntities,
  TITLE_FIELD_ID,
} from "#shared/domain/data-types/schema";
import { providerUrlProblem } from "#shared/domain/data-types/provider-url";
import { boundFormats, boundedTypes, type BoundedType, comparableValue, normalizeDateTimeValue } from "#shared/domain/data-types/values";

/**
 * The save-time rules of a data type (spec "Data type", Limits, Versioning), as pure functions.
 * `dataTypeIssues` reports every violation with its field path; `normalizeFields` resolves the
 * forced and default flags. The service runs both; nothing here does I/O.
 */

export const FIELD_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Keys a record carries itself; a field may not shadow them (compared case-insensitively). */
export const recordSystemKeys = [
  "_id",
  "dataId",
  "dataTypeId",
  "hubId",
  "organizationId",
  "createdBy",
  "updatedBy",
  "createdTime",
  "updatedTime",
  "version",
  "entity",
  "expiresAt",
  "PK",
  "SK",
  "GSI1PK",
  "GSI1SK",
  "GSI2PK",
  "GSI2SK",
] as const;
const systemKeysLower = new Set(recordSystemKeys.map((key) => key.toLowerCase()));

/** Which `validations` keys each field type supports (spec table). */
const supportedValidations: Partial<Record<FieldType, readonly string[]>> = {
  number: ["min", "max", "decimals"],
  date: ["min", "max", "minInclusive", "maxInclusive"],
  dateTime: ["min", "max", "minInclusive", "maxInclusive"],
  time: ["min", "max", "minInclusive", "maxInclusive"],
  multiOption: ["minSelected", "maxSelected"],
};

const isIdentityType = (type: FieldType) => type === "title" || type === "primaryKey";

export interface RuleContext {
  /** The stored data type when updating; undefined on create. */
  existing?: DataType | undefined;
  /** Data types of this organization named by `relation.target` (targetKind dataType), by id. Absent = does not exist. */
  relationTargets: ReadonlyMap<string, DataType>;
  allowLoopbackProviders?: boolean;
  /** Creating a type from an export of the earlier version: a primaryKey field may stand in for the title, and more than MAX_SEARCHABLE_FIELDS fields may be searchable. */
  legacyImport?: boolean;
}

function fieldIdOf(field: FieldInput): string | undefined {
  return field.type === "title" ? TITLE_FIELD_ID : field.id;
}

/** Resolves defaults and the forced flags of the title field. */
export function normalizeField(field: FieldInput): Field {
  const isTitle = field.type === "title";
  const normalized: Field = {
    id: isTitle ? TITLE_FIELD_ID : (field.id ?? ""),
    title: field.title,
    type: field.type,
    required: isTitle ? true : (field.required ?? field.isRequired ?? false),
    unique: isTitle ? true : (field.unique ?? false),
    searchable: isTitle ? true : (field.searchable ?? false),
    show: isTitle ? true : (field.show ?? true),
    optionData: field.optionData ?? [],
  };
  for (const key of ["description", "inputType", "default", "format"] as const) {
    const value = field[key];
    if (value !== undefined && value !== null) normalized[key] = value;
  }
  if (field.validations) {
    const validations = Object.fromEntries(
      Object.entries(field.validations)
        .filter(([, value]) => value !== undefined)
        // dateTime bounds are stored in the one form record values are stored in (YYYY-MM-DD HH:mm:ss, UTC).
        .map(([key, value]) => [
          key,
          field.type === "dateTime" && typeof value === "string" ? (normalizeDateTimeValue(value) ?? value) : value,
        ]),
    );
    if (Object.keys(validations).length > 0) normalized.validations = validations;
  }
  if (field.relation) normalized.relation = field.relation;
  return normalized;
}

export function normalizeFields(fields: readonly FieldInput[]): Field[] {
  return fields.map(normalizeField);
}

export function searchableCount(fields: readonly Pick<Field, "searchable" | "type">[]): number {
  return fields.filter((field) => field.type === "title" || field.searchable).length;
}

/** The key of a uniqueTogether combination that ignores order. */
const combinationKey = (combination: readonly string[]) => JSON.stringify([...combination].sort());

class IssueList {
  readonly issues: FieldIssue[] = [];
  add(field: string, message: string) {
    this.issues.push({ field, message });
  }
}

function checkIdentity(input: DataTypeInput, context: RuleContext, issues: IssueList) {
  const isExtension = input.extends !== null;
  const titles = input.fields.flatMap((field, index) => (field.type === "title" ? [index] : []));
  const primaryKeys = input.fields.flatMap((field, index) => (field.type === "primaryKey" ? [index] : []));
  const isLegacyPrimaryKeyType =
    (context.existing?.fields.some((field) => field.type === "primaryKey") ?? false) ||
    (context.legacyImport === true && primaryKeys.length > 0);

  if (isExtension) {
    for (const index of [...titles, ...primaryKeys]) {
      issues.add(`fields.${index}.type`, "an extension data type (extends) has no title field");
    }
    return;
  }
  for (const index of titles.slice(1)) issues.add(`fields.${index}.type`, "exactly one field may have type title");
  for (const index of primaryKeys.slice(1)) issues.add(`fields.${index}.type`, "at most one field may have type primaryKey");
  if (primaryKeys.length > 0 && !isLegacyPrimaryKeyType) {
    for (const index of primaryKeys) {
      issues.add(`fields.${index}.type`, "primaryKey is kept only on data types created before the title type existed; use a title field");
    }
  } else if (primaryKeys.length > 0 && titles.length > 0) {
    for (const index of titles) issues.add(`fields.${index}.type`, "a data type uses title or primaryKey, never both");
  } else if (isLegacyPrimaryKeyType && titles.length > 0) {
    // Its records' dataId came from the primaryKey field; swapping it for a title would leave
    // them keyed by a field the type no longer has.
    for (const index of titles)
      issues.add(`fields.${index}.type`, "this legacy data type keeps its primaryKey field and cannot take a title field");
  }
  if (titles.length === 0 && primaryKeys.length === 0) {
    issues.add(
      "fields",
      isLegacyPrimaryKeyType ? "the primaryKey field of this legacy data type must be kept" : "exactly one field must have type title",
    );
  }
}

function checkFieldIds(fields: readonly FieldInput[], issues: IssueList) {
  const seen = new Set<string>();
  fields.forEach((field, index) => {
    const path = `fields.${index}.id`;
    if (field.type === "title") {
      seen.add(TITLE_FIELD_ID);
      return;
    }
    if (field.id === undefined || field.id === "") {
      issues.add(path, "id is required");
      return;
    }
    if (!FIELD_ID_PATTERN.test(field.id)) {
      issues.add(path, "id must start with a letter and contain only letters, digits and _");
      return;
    }
    const isIdentityDataId = field.type === "primaryKey" && field.id === TITLE_FIELD_ID;
    if (systemKeysLower.has(field.id.toLowerCase()) && !isIdentityDataId) {
      issues.add(path, `id "${field.id}" is a record system key; choose another id`);
      return;
    }
    if (seen.has(field.id)) issues.add(path, `id "${field.id}" is used by another field of this data type`);
    seen.add(field.id);
  });
}

function checkFlags(field: FieldInput, path: string, issues: IssueList) {
  if (field.type !== "title" && field.required === undefined && field.isRequired === undefined) {
    issues.add(`${path}.required`, "required is required (isRequired is accepted as a synonym)");
  }
  if (field.required !== undefined && field.isRequired !== undefined && field.required !== field.isRequired) {
    issues.add(`${path}.isRequired`, "required and isRequired are synonyms and must agree");
  }
  if (field.primaryKey === true && !isIdentityType(field.type)) {
    issues.add(`${path}.primaryKey`, "the primaryKey marker is only accepted on the title (or legacy primaryKey) field");
  }
}

function checkOptions(field: FieldInput, path: string, issues: IssueList) {
  const options = field.optionData ?? [];
  if (field.type === "option" || field.type === "multiOption") {
    if (options.length === 0) issues.add(`${path}.optionData`, `optionData is required and non-empty for type ${field.type}`);
    if (new Set(options).size !== options.length) issues.add(`${path}.optionData`, "optionData values must be distinct");
  } else if (options.length > 0) {
    issues.add(`${path}.optionData`, "optionData only applies to option and multiOption fields (send it empty or leave it out)");
  }
}

function checkValidations(field: FieldInput, index: number, fields: readonly FieldInput[], issues: IssueList) {
  const validations = field.validations;
  if (!validations) return;
  const path = `fields.${index}.validations`;
  const supported = supportedValidations[field.type] ?? [];
  const setKeys = Object.entries(validations)
    .filter(([, value]) => value !== undefined)
    .map(([key]) => key);
  const unsupported = setKeys.filter((key) => !supported.includes(key));
  for (const key of unsupported) issues.add(`${path}.${key}`, `validation ${key} is not supported for type ${field.type}`);
  if (unsupported.length > 0) return;

  if ((boundedTypes as readonly string[]).includes(field.type)) {
    const type = field.type as BoundedType;
    const literals: Partial<Record<"min" | "max", number>> = {};
    for (const key of ["min", "max"] as const) {
      const bound = validations[key];
      if (bound === undefined) continue;
      if (typeof bound === "object") {
        const target = fields.findIndex((other) => fieldIdOf(other) === bound.ref);
        if (bound.ref === fieldIdOf(field)) issues.add(`${path}.${key}.ref`, "ref must name another field, not the field itself");
        else if (target < 0) issues.add(`${path}.${key}.ref`, `ref "${bound.ref}" names no field of this data type`);
        else if (fields[target]?.type !== field.type)
          issues.add(`${path}.${key}.ref`, `ref must name a field of the same type (${field.type})`);
        continue;
      }
      const value = comparableValue(type, bound);
      if (value === undefined) issues.add(`${path}.${key}`, `${key} must be ${boundFormats[type]}`);
      else literals[key] = value;
    }
    if (literals.min !== undefined && literals.max !== undefined && literals.min > literals.max) {
      issues.add(`${path}.min`, "min must not exceed max");
    }
  }
  if (field.type === "multiOption") {
    const options = field.optionData?.length ?? 0;
    const { minSelected, maxSelected } = validations;
    if (minSelected !== undefined && maxSelected !== undefined && minSelected > maxSelected) {
      issues.add(`${path}.minSelected`, "minSelected must not exceed maxSelected");
    }
    if (maxSelected !== undefined && maxSelected > options)
      issues.add(`${path}.maxSelected`, "maxSelected must not exceed the number of options");
    if (minSelected !== undefined && minSelected > options)
      issues.add(`${path}.minSelected`, "minSelected must not exceed the number of options");
  }
}

function checkRelation(field: FieldInput, path: string, input: DataTypeInput, context: RuleContext, issues: IssueList) {
  const relation = field.relation;
  if (field.type !== "relation") {
    if (relation) issues.add(`${path}.relation`, "relation only applies to fields of type relation");
    return;
  }
  if (!relation) {
    issues.add(`${path}.relation`, "relation is required for type relation");
    return;
  }
  const resolvesThroughTarget = relation.kind === "hasOne" || relation.kind === "hasMany";
  if (relation.targetKind === "standard") {
    if (!(standardEntities as readonly string[]).includes(relation.target)) {
      issues.add(`${path}.relation.target`, `target must be one of ${standardEntities.join(", ")} for targetKind standard`);
    }
    if (resolvesThroughTarget)
      issues.add(
        `${path}.relation.targetKind`,
        `${relation.kind} resolves through a field of the target data type: use targetKind dataType`,
      );
    else if (relation.via !== undefined) issues.add(`${path}.relation.via`, "via only applies to hasOne and hasMany");
    return;
  }
  const ownId = context.existing?._id;
  const isSelf = ownId !== undefined && relation.target === ownId;
  const targetFields: readonly (FieldInput | Field)[] | undefined = isSelf
    ? input.fields
    : context.relationTargets.get(relation.target)?.fields;
  if (!ID_PATTERN.test(relation.target) || !targetFields) {
    issues.add(`${path}.relation.target`, "target must be the _id of an existing data type of this organization");
    return;
  }
  if (!resolvesThroughTarget) {
    if (relation.via !== undefined) issues.add(`${path}.relation.via`, "via only applies to hasOne and hasMany");
    return;
  }
  if (relation.via === undefined) {
    issues.add(`${path}.relation.via`, `via is required for ${relation.kind}`);
    return;
  }
  const inverse = targetFields.find((candidate) => fieldIdOf(candidate as FieldInput) === relation.via);
  const pointsBack =
    inverse?.type === "relation" &&
    inverse.relation?.targetKind === "dataType" &&
    (inverse.relation.kind === "belongsTo" || inverse.relation.kind === "belongsToMany") &&
    ownId !== undefined &&
    inverse.relation.target === ownId;
  if (!pointsBack) {
    issues.add(
      `${path}.relation.via`,
      ownId === undefined
        ? "via must name a belongsTo/belongsToMany field of the target that points back to this data type; create this data type first, then the inverse field, then add this field"
        : `via must name a belongsTo/belongsToMany relation field of the target data type that points back to this data type`,
    );
  }
}

function checkUniqueTogether(input: DataTypeInput, issues: IssueList) {
  const byId = new Map(input.fields.map((field) => [fieldIdOf(field), field]));
  const seenCombinations = new Set<string>();
  input.uniqueTogether.forEach((combination, index) => {
    const path = `uniqueTogether.${index}`;
    if (new Set(combination).size < 2) issues.add(path, "a combination needs at least 2 different field ids");
    if (new Set(combination).size !== combination.length) issues.add(path, "a combination lists a field id twice");
    combination.forEach((fieldId, position) => {
      const field = byId.get(fieldId);
      if (!field) issues.add(`${path}.${position}`, `"${fieldId}" names no field of this data type`);
      else if (isIdentityType(field.type)) issues.add(`${path}.${position}`, "a combination cannot include the title field");
      else if (
        field.type === "relation" &&
        (field.relation?.targetKind === "dataType" || field.relation?.kind === "hasOne" || field.relation?.kind === "hasMany")
      ) {
        issues.add(`${path}.${position}`, "a combination cannot include a relation field filled from another data type");
      }
    });
    const key = combinationKey(combination);
    if (seenCombinations.has(key)) issues.add(path, "the same combination is listed twice");
    seenCombinations.add(key);
  });
}

function checkTypeLevel(input: DataTypeInput, context: RuleContext, issues: IssueList) {
  const existing = context.existing;
  // extends forces commonData to true (spec): a sent false is coerced, never refused.
  const commonData = input.extends !== null ? true : input.commonData;
  if (existing && commonData !== undefined && commonData !== existing.commonData) {
    issues.add("commonData", "commonData cannot change after creation");
  }
  if (existing && (existing.extends === null) !== (input.extends === null)) {
    issues.add("extends", "extends cannot be added or removed after creation (its entity may change)");
  }
  const count = searchableCount(normalizeFields(input.fields));
  // Types of the earlier version keep the searchable fields they had (spec: they stay savable): an
  // import brings them in as they are, and later saves may keep but not raise that count.
  const allowed = existing
    ? Math.max(MAX_SEARCHABLE_FIELDS, searchableCount(existing.fields))
    : context.legacyImport === true
      ? Math.max(MAX_SEARCHABLE_FIELDS, count)
      : MAX_SEARCHABLE_FIELDS;
  if (count > allowed) {
    issues.add(
      "fields",
      allowed > MAX_SEARCHABLE_FIELDS
        ? `this data type already has ${allowed} searchable fields (more than ${MAX_SEARCHABLE_FIELDS}); a save may not raise the count`
        : `at most ${MAX_SEARCHABLE_FIELDS} fields may be searchable, the title included (found ${count})`,
    );
  }
  if (input.provider === "internal" && input.providerConfig !== null) {
    issues.add("providerConfig", "providerConfig must be null when provider is internal");
  }
  if (input.provider === "external-api") {
    if (input.providerConfig === null) issues.add("providerConfig", "providerConfig with a url is required when provider is external-api");
    else {
      const problem = providerUrlProblem(input.providerConfig.url, { allowLoopback: context.allowLoopbackProviders ?? false });
      if (problem) issues.add("providerConfig.url", problem);
    }
  }
}

/** Every rule violation of `input` (already shape-checked by dataTypeInputSchema), each naming its field. */
export function dataTypeIssues(input: DataTypeInput, context: RuleContext): FieldIssue[] {
  const issues = new IssueList();
  checkIdentity(input, context, issues);
  checkFieldIds(input.fields, issues);
  input.fields.forEach((field, index) => {
    const path = `fields.${index}`;
    checkFlags(field, path, issues);
    checkOptions(field, path, issues);
    checkValidations(field, index, input.fields, issues);
    checkRelation(field, path, input, context, issues);
  });
  checkUniqueTogether(input, issues);
  checkTypeLevel(input, context, issues);
  return issues.issues;
}

/** Ids of the other data types the input's relation fields point at (the service loads them). */
export function relationTargetIds(input: Pick<DataTypeInput, "fields">, ownId?: string): string[] {
  const ids = input.fields.flatMap((field) =>
    field.type === "relation" &&
    field.relation?.targetKind === "dataType" &&
    ID_PATTERN.test(field.relation.target) &&
    field.relation.target !== ownId
      ? [field.relation.target]
      : [],
  );
  return [...new Set(ids)];
}
