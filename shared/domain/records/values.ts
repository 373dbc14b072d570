import type { DataType, Field } from "#shared/domain/data-types/schema";
import { TITLE_FIELD_ID } from "#shared/domain/data-types/title-field";
import { type BoundedType, comparableValue, normalizeDateTimeValue } from "#shared/domain/data-types/values";
import type { FieldIssue } from "#shared/domain/errors";
import { ID_PATTERN } from "#shared/domain/ids";
import { storableNumberProblem, textProblem } from "#shared/domain/schemas";

/**
 * The value rules of a record (pure): each custom field value is checked against its field's
 * type and validations, defaults are applied, and the result is the normalized values to store.
 * Every violation names the field id. Nothing here does I/O: relation targets are checked by the
 * service afterwards (it gets the ids from `relationReferences`).
 */

export const MAX_TEXT_LENGTH = 10_000;
/** belongsToMany ids per field, and relation ids per record (each is a link item in the record's transaction). */
export const MAX_RELATION_IDS = 20;

const TITLE_WORDS = /^[\p{L}\p{N}_-]+( [\p{L}\p{N}_-]+)*$/u;
const TITLE_NO_SPACE = /^[\p{L}\p{N}_-]+$/u;

/** Why `dataId` is not an acceptable title, or undefined. Legacy (`no-space`) types allow no spaces at all. */
export function titleProblem(dataId: unknown, rule: DataType["titleRule"]): string | undefined {
  if (dataId === undefined || dataId === null || dataId === "") return "dataId is required";
  if (typeof dataId !== "string") return "dataId must be a string";
  if (dataId.length > 200) return "dataId must be at most 200 characters";
  if (rule === "no-space") {
    return TITLE_NO_SPACE.test(dataId)
      ? undefined
      : "dataId may contain only letters, digits, - and _ (this data type comes from the earlier version: no spaces until it is saved again)";
  }
  return TITLE_WORDS.test(dataId)
    ? undefined
    : "dataId may contain only letters, digits, - and _ with single spaces between words (no leading or trailing space)";
}

/** A key's own value (a field id such as `constructor` or `toString` never reads an inherited member). */
export const ownValue = (record: Record<string, unknown>, key: string): unknown => (Object.hasOwn(record, key) ? record[key] : undefined);

export const isEmptyValue = (value: unknown) =>
  value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0);

/** hasOne/hasMany fields store nothing: they are resolved from the target's `via` field on read. */
export const isReadOnlyField = (field: Field) =>
  field.type === "relation" && (field.relation?.kind === "hasOne" || field.relation?.kind === "hasMany");

/** The title (or a legacy primaryKey named dataId) is the record's `dataId`, not a custom value. */
export const isTitleField = (field: Field) => field.type === "title" || (field.type === "primaryKey" && field.id === TITLE_FIELD_ID);

export function decimalPlaces(value: number): number {
  const [mantissa = "", exponent = "0"] = String(value).toLowerCase().split("e");
  const fraction = mantissa.split(".")[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent));
}

/** A failed check keeps `value` when the value had the right type and broke a rule, so its bounds are still checked (and reported together). */
type Checked = { ok: true; value: unknown } | { ok: false; problem: string; value?: unknown };
const good = (value: unknown): Checked => ({ ok: true, value });
const bad = (problem: string, value?: unknown): Checked => (value === undefined ? { ok: false, problem } : { ok: false, problem, value });

const temporalFormats = {
  date: "a date YYYY-MM-DD",
  dateTime: "a date-time YYYY-MM-DD HH:mm[:ss] or ISO 8601 (no offset = UTC)",
  time: "a time HH:mm or HH:mm:ss",
};

/** Record values and validation bounds accept the same texts: one parser, data-types/values.ts. */
const temporalPoint = (type: "date" | "dateTime" | "time", value: unknown): number | undefined => comparableValue(type, value);

/** The stored form: dateTime values as `YYYY-MM-DD HH:mm:ss` UTC (one form, whatever was typed); others as sent. */
const storedTemporal = (type: "date" | "dateTime" | "time", value: unknown) =>
  type === "dateTime" && typeof value === "string" ? (normalizeDateTimeValue(value) ?? value) : value;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function checkTemporal(field: Field, type: "date" | "dateTime" | "time", value: unknown): Checked {
  const format = temporalFormats[type];
  if (isPlainObject(value)) {
    if (field.inputType !== "range") return bad(`must be ${format} (a { from, to } range needs inputType range)`);
    const keys = Object.keys(value);
    if (keys.some((key) => key !== "from" && key !== "to") || !("from" in value) || !("to" in value))
      return bad("a range must be { from, to }");
    const from = temporalPoint(type, value.from);
    const to = temporalPoint(type, value.to);
    if (from === undefined) return bad(`from must be ${format}`);
    if (to === undefined) return bad(`to must be ${format}`);
    if (from > to) return bad("from must not be after to");
    return good({ from: storedTemporal(type, value.from), to: storedTemporal(type, value.to) });
  }
  return temporalPoint(type, value) === undefined
    ? bad(`must be ${format}${field.inputType === "range" ? " or a { from, to } range" : ""}`)
    : good(storedTemporal(type, value));
}

function checkGeolocation(value: unknown): Checked {
  let lat: unknown;
  let lng: unknown;
  if (typeof value === "string") {
    const parts = value.split(",").map((part) => part.trim());
    if (parts.length !== 2 || parts.some((part) => !/^[+-]?\d+(\.\d+)?$/.test(part))) return bad('must be { lat, lng } or "lat,lng"');
    [lat, lng] = parts.map(Number);
  } else if (isPlainObject(value) && Object.keys(value).every((key) => key === "lat" || key === "lng")) {
    ({ lat, lng } = value);
  } else {
    return bad('must be { lat, lng } or "lat,lng"');
  }
  if (typeof lat !== "number" || !Number.isFinite(lat) || lat < -90 || lat > 90) return bad("lat must be a number from -90 to 90");
  if (typeof lng !== "number" || !Number.isFinite(lng) || lng < -180 || lng > 180) return bad("lng must be a number from -180 to 180");
  for (const [name, coordinate] of [
    ["lat", lat],
    ["lng", lng],
  ] as const) {
    const problem = storableNumberProblem(coordinate);
    if (problem) return bad(`${name} ${problem}`);
  }
  return good({ lat, lng });
}

function checkPhone(value: unknown): Checked {
  if (typeof value !== "string") return bad("must be a phone number string");
  const normalized = value.replace(/[\s-]/g, "");
  return /^\+\d{7,15}$/.test(normalized) ? good(normalized) : bad("must be + followed by 7 to 15 digits (spaces and dashes allowed)");
}

function relationIdProblem(field: Field, id: unknown): string | undefined {
  const relation = field.relation;
  if (typeof id !== "string" || id.length === 0 || id.length > 64) return "must be an id string";
  const needsObjectId = relation?.targetKind === "dataType" || relation?.target === "hub" || relation?.target === "vehicle";
  return needsObjectId && !ID_PATTERN.test(id) ? "must be a 24-character lowercase hex _id" : undefined;
}

function checkRelation(field: Field, value: unknown): Checked {
  if (field.relation?.kind === "belongsTo") {
    const problem = relationIdProblem(field, value);
    return problem ? bad(problem) : good(value);
  }
  if (!Array.isArray(value)) return bad("must be an array of _id values (belongsToMany)");
  if (value.length > MAX_RELATION_IDS) return bad(`at most ${MAX_RELATION_IDS} ids`);
  for (const [index, id] of value.entries()) {
    const problem = relationIdProblem(field, id);
    if (problem) return bad(`item ${index} ${problem}`);
  }
  if (new Set(value).size !== value.length) return bad("ids must be distinct");
  return good(value);
}

function checkNumber(field: Field, value: unknown): Checked {
  if (typeof value !== "number" || !Number.isFinite(value)) return bad("must be a finite number");
  const unstorable = storableNumberProblem(value);
  if (unstorable) return bad(unstorable);
  const decimals = field.validations?.decimals;
  if (decimals !== undefined && decimalPlaces(value) > decimals) return bad(`must have at most ${decimals} decimal places`, value);
  return good(value);
}

/**
 * How an offending item is named in a message: strings quoted, anything else by its kind only, so
 * a client's arbitrarily nested array is never serialised (or recursed into) here.
 */
function describeItem(item: unknown): string {
  if (typeof item === "string") return JSON.stringify(item.length > 100 ? `${item.slice(0, 100)}…` : item);
  if (Array.isArray(item)) return "an array";
  if (item === null) return "null";
  return typeof item === "object" ? "an object" : `${typeof item} ${String(item)}`;
}

function checkMultiOption(field: Field, value: unknown): Checked {
  if (!Array.isArray(value)) return bad("must be an array of options");
  const unknownOption = value.find((option) => typeof option !== "string" || !field.optionData.includes(option));
  if (unknownOption !== undefined) return bad(`${describeItem(unknownOption)} is not one of ${field.optionData.join(", ")}`);
  if (new Set(value).size !== value.length) return bad("options must be distinct");
  const { minSelected, maxSelected } = field.validations ?? {};
  if (minSelected !== undefined && value.length < minSelected) return bad(`select at least ${minSelected} options`);
  if (maxSelected !== undefined && value.length > maxSelected) return bad(`select at most ${maxSelected} options`);
  return good(value);
}

/** Type check and normalization of one non-empty value. */
export function checkFieldValue(field: Field, value: unknown): Checked {
  switch (field.type) {
    case "title":
    case "primaryKey":
    case "text":
      if (typeof value !== "string") return bad("must be a string");
      if (value.length > MAX_TEXT_LENGTH) return bad(`must be at most ${MAX_TEXT_LENGTH} characters`);
      {
        // The one text rule (shared/domain/schemas.ts): text fields are free text, titles and keys names.
        const problem = textProblem(value, { lineBreaks: field.type === "text" });
        return problem ? bad(problem) : good(value);
      }
    case "number":
      return checkNumber(field, value);
    case "boolean":
      return typeof value === "boolean" ? good(value) : bad("must be true or false");
    case "option":
      return typeof value === "string" && field.optionData.includes(value)
        ? good(value)
        : bad(`must be one of ${field.optionData.join(", ")}`);
    case "multiOption":
      return checkMultiOption(field, value);
    case "date":
    case "dateTime":
    case "time":
      return checkTemporal(field, field.type, value);
    case "geolocation":
      return checkGeolocation(value);
    case "phoneNumber":
      return checkPhone(value);
    case "relation":
      return checkRelation(field, value);
  }
}

/** The field's `default` text as a value of its type (checked like a sent value afterwards). */
export function defaultValueOf(field: Field): unknown {
  const text = field.default;
  if (text === undefined || isReadOnlyField(field) || field.type === "relation") return undefined;
  switch (field.type) {
    case "number":
      return text.trim() !== "" && Number.isFinite(Number(text)) ? Number(text) : text;
    case "boolean":
      return text === "true" ? true : text === "false" ? false : text;
    case "multiOption": {
      try {
        const parsed: unknown = JSON.parse(text);
        if (Array.isArray(parsed)) return parsed;
      } catch {
        // not JSON: a comma-separated list
      }
      return text
        .split(",")
        .map((option) => option.trim())
        .filter((option) => option !== "");
    }
    default:
      return text;
  }
}

/** The comparable points of a bounded value (both ends of a range). */
function boundedPoints(type: BoundedType, value: unknown): number[] {
  if (isPlainObject(value)) return [value.from, value.to].flatMap((end) => points(type, end));
  return points(type, value);
}

function points(type: BoundedType, value: unknown): number[] {
  const point = comparableValue(type, value);
  return point === undefined ? [] : [point];
}

type FieldBound = NonNullable<NonNullable<Field["validations"]>["min"]>;

/**
 * A literal bound, or the value of the referenced field of the same record (skipped while that
 * field is empty). A ref to a range: a min compares with its latest point, a max with its earliest,
 * so the value lies wholly after / before the other field.
 */
function resolveBound(type: BoundedType, bound: FieldBound | undefined, side: "min" | "max", values: Record<string, unknown>) {
  if (bound === undefined) return undefined;
  if (typeof bound === "object") {
    const limits = isEmptyValue(ownValue(values, bound.ref)) ? [] : boundedPoints(type, ownValue(values, bound.ref));
    if (limits.length === 0) return undefined;
    return { limit: side === "min" ? Math.max(...limits) : Math.min(...limits), label: `the value of ${bound.ref}` };
  }
  const limit = comparableValue(type, bound);
  return limit === undefined ? undefined : { limit, label: String(bound) };
}

const boundedTypeNames: readonly string[] = ["number", "date", "dateTime", "time"];

/** min/max (literal or ref), honoring minInclusive/maxInclusive on temporal types (numbers: inclusive). */
export function boundsProblem(field: Field, value: unknown, values: Record<string, unknown>): string | undefined {
  const validations = field.validations;
  if (!validations || !boundedTypeNames.includes(field.type)) return undefined;
  const type = field.type as BoundedType;
  const isTemporal = type !== "number";
  const minInclusive = !isTemporal || validations.minInclusive !== false;
  const maxInclusive = !isTemporal || validations.maxInclusive !== false;
  const min = resolveBound(type, validations.min, "min", values);
  const max = resolveBound(type, validations.max, "max", values);
  for (const point of boundedPoints(type, value)) {
    if (min && (minInclusive ? point < min.limit : point <= min.limit))
      return `must be ${minInclusive ? "at least" : "after"} ${min.label}`;
    if (max && (maxInclusive ? point > max.limit : point >= max.limit))
      return `must be ${maxInclusive ? "at most" : "before"} ${max.label}`;
  }
  return undefined;
}

export interface CheckedValues {
  /** Non-empty normalized values by field id (no title, no hasOne/hasMany). */
  values: Record<string, unknown>;
  issues: FieldIssue[];
}

/**
 * Checks the custom values of a record (`sent`: every key of the body except the envelope keys).
 * Absent/null values take the field's default; required fields must end up non-empty; keys that
 * are not fields of the type are rejected. hasOne/hasMany values are server-set (resolved on
 * read), so a record read by GET and sent back is accepted: they are ignored, never stored.
 */
export function checkRecordValues(dataType: DataType, sent: Record<string, unknown>): CheckedValues {
  const issues: FieldIssue[] = [];
  const byId = new Map(dataType.fields.map((field) => [field.id, field]));
  for (const key of Object.keys(sent)) {
    const field = byId.get(key);
    if (!field || isTitleField(field)) issues.push({ field: key, message: "unknown field: not a field of this data type" });
  }
  const values: Record<string, unknown> = {};
  const brokeOnlyARule: Record<string, unknown> = {};
  for (const field of dataType.fields) {
    if (isTitleField(field) || isReadOnlyField(field)) continue;
    const sentValue = ownValue(sent, field.id);
    const fromDefault = isEmptyValue(sentValue) && field.default !== undefined && field.default !== "";
    const value = fromDefault ? defaultValueOf(field) : sentValue;
    if (isEmptyValue(value)) {
      if (field.required) issues.push({ field: field.id, message: "is required" });
      continue;
    }
    const checked = checkFieldValue(field, value);
    if (checked.ok) values[field.id] = checked.value;
    else {
      issues.push({
        field: field.id,
        message: fromDefault ? `${checked.problem} (the data type's default ${JSON.stringify(field.default)})` : checked.problem,
      });
      if (checked.value !== undefined) brokeOnlyARule[field.id] = checked.value;
    }
  }
  // Every rule a value breaks is reported in the same answer (e.g. both decimals and max).
  for (const field of dataType.fields) {
    const own = Object.hasOwn(values, field.id)
      ? values[field.id]
      : Object.hasOwn(brokeOnlyARule, field.id)
        ? brokeOnlyARule[field.id]
        : undefined;
    if (own === undefined) continue;
    const problem = boundsProblem(field, own, values);
    if (problem) issues.push({ field: field.id, message: problem });
  }
  return { values, issues };
}

/** Relation ids to verify: `{ field, ids }` for every belongsTo/belongsToMany value. */
export function relationReferences(dataType: DataType, values: Record<string, unknown>): Array<{ field: Field; ids: string[] }> {
  return dataType.fields.flatMap((field) => {
    const value = ownValue(values, field.id);
    if (field.type !== "relation" || isReadOnlyField(field) || isEmptyValue(value)) return [];
    return [{ field, ids: Array.isArray(value) ? (value as string[]) : [value as string] }];
  });
}
