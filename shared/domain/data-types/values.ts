import { DateTime } from "luxon";

/**
 * Literal values of typed fields, as validation bounds name them (and as records carry them).
 * Each parser returns a number that orders the values correctly, or undefined when the text is
 * not a value of that type. The records area reuses these to check `min`/`max` on save.
 *
 * - date: `YYYY-MM-DD` → epoch milliseconds at UTC midnight
 * - dateTime: `YYYY-MM-DD HH:mm[:ss]` or ISO 8601 `YYYY-MM-DDTHH:mm[:ss[.ffffff]][Z|±HH:mm]`; no
 *   offset means UTC → epoch milliseconds. The same set is accepted for validation bounds and
 *   record values (this is the one parser), and both are stored in one form:
 *   `normalizeDateTimeValue` gives `YYYY-MM-DD HH:mm:ss` in UTC, the form of the product's own
 *   timestamps (createdTime, updatedTime); fractional seconds are dropped.
 * - time: `HH:mm[:ss]`, 00:00–23:59:59 → seconds since midnight
 * - number: a finite JSON number
 */
const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME_PATTERN = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?$/;
const TIME_PATTERN = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/;

export function parseDateValue(text: string): number | undefined {
  if (!DATE_PATTERN.test(text)) return undefined;
  const parsed = DateTime.fromISO(text, { zone: "utc" });
  return parsed.isValid ? parsed.toMillis() : undefined;
}

export function parseDateTimeValue(text: string): number | undefined {
  if (!DATE_TIME_PATTERN.test(text)) return undefined;
  const parsed = DateTime.fromISO(text.replace(" ", "T"), { zone: "utc" });
  return parsed.isValid ? parsed.toMillis() : undefined;
}

const STORED_DATE_TIME = "yyyy-MM-dd HH:mm:ss";

/** The stored form of a dateTime text (`YYYY-MM-DD HH:mm:ss`, UTC), or undefined when it is not a dateTime. */
export function normalizeDateTimeValue(text: string): string | undefined {
  const millis = parseDateTimeValue(text);
  return millis === undefined ? undefined : DateTime.fromMillis(millis, { zone: "utc" }).toFormat(STORED_DATE_TIME);
}

export function parseTimeValue(text: string): number | undefined {
  if (!TIME_PATTERN.test(text)) return undefined;
  const [hours = 0, minutes = 0, seconds = 0] = text.split(":").map(Number);
  return hours * 3600 + minutes * 60 + seconds;
}

/** Field types whose values can be bounded by `min`/`max`. */
export const boundedTypes = ["number", "date", "dateTime", "time"] as const;
export type BoundedType = (typeof boundedTypes)[number];

export const boundFormats: Record<BoundedType, string> = {
  number: "a number",
  date: "a date YYYY-MM-DD",
  dateTime: "a date-time YYYY-MM-DD HH:mm[:ss] or ISO 8601",
  time: "a time HH:mm or HH:mm:ss",
};

/** A comparable number for a literal of the given type, or undefined when it is not one. */
export function comparableValue(type: BoundedType, value: unknown): number | undefined {
  if (type === "number") return typeof value === "number" && Number.isFinite(value) ? value : undefined;
  if (typeof value !== "string") return undefined;
  if (type === "date") return parseDateValue(value);
  if (type === "dateTime") return parseDateTimeValue(value);
  return parseTimeValue(value);
}
