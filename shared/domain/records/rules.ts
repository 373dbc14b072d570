import { createHash } from "node:crypto";
import type { Caller } from "#shared/domain/caller";
import type { DataType, Field } from "#shared/domain/data-types/schema";
import { parseDateTimeValue, parseTimeValue } from "#shared/domain/data-types/values";
import type { GuardEntry, LinkEntry } from "#shared/domain/records/schema";
import { isEmptyValue, isReadOnlyField, isTitleField, ownValue } from "#shared/domain/records/values";

/**
 * Derived index entries of a record (pure): uniqueness guards, search tokens and relation links.
 * The store writes them in the record's transaction; the record keeps the list it wrote, so an
 * update or delete removes exactly those, whatever the data type became meanwhile.
 */

/** Distinct search tokens indexed per record: each is one item in the record's transaction (100 items at most). */
export const MAX_TOKENS_PER_RECORD = 20;
/**
 * Words are indexed by their first 64 characters, and `q` words are compared on their first 64
 * characters too: two words sharing those 64 characters match each other whatever follows.
 */
export const MAX_TOKEN_LENGTH = 64;

/** Values longer than this are guarded by their SHA-256 (a sort key holds 1 KB). */
const MAX_GUARD_VALUE_LENGTH = 200;

/** A comparable text of a non-empty value: instants for dateTime, seconds for time, sets sorted. */
export function canonicalValue(field: Field, value: unknown): string {
  if (Array.isArray(value)) return JSON.stringify([...value].map(String).sort());
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>;
    if ("lat" in record) return `${record.lat},${record.lng}`;
    return `${canonicalValue(field, record.from)}..${canonicalValue(field, record.to)}`;
  }
  if (field.type === "dateTime" && typeof value === "string") return String(parseDateTimeValue(value) ?? value);
  if (field.type === "time" && typeof value === "string") return String(parseTimeValue(value) ?? value);
  return String(value);
}

function guardValue(text: string): string {
  return text.length > MAX_GUARD_VALUE_LENGTH ? `sha256:${createHash("sha256").update(text).digest("hex")}` : text;
}

/** Name of a uniqueTogether guard: `+` then the sorted ids (field ids cannot contain `+`). */
export const combinationName = (combination: readonly string[]) => `+${[...combination].sort().join("+")}`;

/**
 * Guard entries of a record: one per non-empty `unique` field (not the title: the record key is
 * its guard) and one per uniqueTogether combination whose members are all non-empty (an absent
 * boolean counts as false). Multi-value members compare as sets.
 */
export function uniqueGuards(dataType: DataType, values: Record<string, unknown>, scope: string): GuardEntry[] {
  const byId = new Map(dataType.fields.map((field) => [field.id, field]));
  const guards: GuardEntry[] = [];
  for (const field of dataType.fields) {
    const value = ownValue(values, field.id);
    if (!field.unique || isTitleField(field) || isReadOnlyField(field) || isEmptyValue(value)) continue;
    guards.push({ name: field.id, scope, value: guardValue(canonicalValue(field, value)) });
  }
  for (const combination of dataType.uniqueTogether) {
    const members = [...combination].sort();
    const parts: string[] = [];
    for (const id of members) {
      const field = byId.get(id);
      const sent = ownValue(values, id);
      const value = sent === undefined && field?.type === "boolean" ? false : sent;
      if (!field || isEmptyValue(value)) break;
      parts.push(canonicalValue(field, value));
    }
    if (parts.length !== members.length) continue;
    guards.push({ name: combinationName(members), scope, value: guardValue(JSON.stringify(parts)) });
  }
  return guards;
}

/** Words of a text: runs of letters and digits, lowercased, accents removed. */
export function wordsOf(text: string): string[] {
  return text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "");
}

function searchableText(value: unknown): string {
  if (typeof value === "string" || typeof value === "number") return String(value);
  if (Array.isArray(value)) return value.filter((item) => typeof item === "string" || typeof item === "number").join(" ");
  return "";
}

/** The searchable fields of a type (title first), as `[fieldId, field]`. */
export function searchableFields(dataType: DataType): Field[] {
  const title = dataType.fields.filter(isTitleField);
  const others = dataType.fields.filter((field) => !isTitleField(field) && field.searchable && !isReadOnlyField(field));
  return [...title, ...others];
}

/**
 * Token → the fields it comes from, for the first MAX_TOKENS_PER_RECORD distinct words of the
 * title and then each searchable field in field order.
 */
export function searchTokens(dataType: DataType, dataId: string, values: Record<string, unknown>): Map<string, Set<string>> {
  const tokens = new Map<string, Set<string>>();
  for (const field of searchableFields(dataType)) {
    const text = isTitleField(field) ? dataId : searchableText(ownValue(values, field.id));
    for (const word of wordsOf(text)) {
      const token = word.slice(0, MAX_TOKEN_LENGTH);
      const sources = tokens.get(token);
      if (sources) sources.add(field.id);
      else if (tokens.size < MAX_TOKENS_PER_RECORD) tokens.set(token, new Set([field.id]));
    }
  }
  return tokens;
}

/** The words of `q` and the one the index is read by (the longest: the fewest candidates). */
export function parseSearch(q: string): { words: string[]; indexWord: string } | undefined {
  const words = [...new Set(wordsOf(q))];
  if (words.length === 0) return undefined;
  const longest = words.reduce((best, word) => (word.length > best.length ? word : best));
  return { words, indexWord: longest.slice(0, MAX_TOKEN_LENGTH) };
}

/**
 * Whether a candidate found through token `hitToken` is a result, and this hit is the one that
 * reports it: every q word must start one of the record's indexed words that come from fields the
 * caller may see; and a record with several words starting with the index word is reported only
 * at the first of them (the index returns them in order), so it never appears twice.
 */
export function isReportedHit(
  tokens: Map<string, Set<string>>,
  search: { words: string[]; indexWord: string },
  hitToken: string,
  hiddenFields: ReadonlySet<string>,
): boolean {
  const firstIndexed = [...tokens.keys()].filter((token) => token.startsWith(search.indexWord)).sort()[0];
  if (firstIndexed !== hitToken) return false;
  const visible = [...tokens].filter(([, fields]) => [...fields].some((field) => !hiddenFields.has(field))).map(([token]) => token);
  // Words are compared on their first MAX_TOKEN_LENGTH characters, as they are indexed.
  return search.words.every((word) => visible.some((token) => token.startsWith(word.slice(0, MAX_TOKEN_LENGTH))));
}

/** Link entries for every belongsTo/belongsToMany value pointing at a record of another data type. */
export function relationLinks(dataType: DataType, values: Record<string, unknown>): LinkEntry[] {
  return dataType.fields.flatMap((field) => {
    if (field.type !== "relation" || field.relation?.targetKind !== "dataType" || isReadOnlyField(field)) return [];
    const value = ownValue(values, field.id);
    if (isEmptyValue(value)) return [];
    const ids = Array.isArray(value) ? (value as string[]) : [value as string];
    return ids.map((targetId) => ({ fieldId: field.id, targetId }));
  });
}

/**
 * Fields hidden from the caller for this type: the union of `hiddenFields` of the token's
 * `view/data` permissionDetails entries naming this type (an entry without dataTypeId applies to
 * every type).
 */
export function hiddenFieldsFor(caller: Caller, dataTypeId: string): Set<string> {
  const hidden = new Set<string>();
  for (const detail of caller.permissionDetails) {
    if (detail.permissionName !== "view/data") continue;
    if (detail.dataTypeId !== undefined && detail.dataTypeId !== dataTypeId) continue;
    for (const field of detail.hiddenFields ?? []) hidden.add(field);
  }
  hidden.delete("_id");
  hidden.delete("dataId");
  return hidden;
}
