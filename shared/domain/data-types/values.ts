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
 * Plain `Date` arithmetic, no luxon: these parsers are in most API bundles (records rules reach
 * them through extensions), and luxon costs their cold start.
 * - time: `HH:mm[:ss]`, 00:00–23:59:59 → seconds since midnight
 * - number: a finite JSON number
 */
const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME_PATTERN = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|([+-])(\d{2}):(\d{2}))?$/;
const TIME_PATTERN = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/;

/** Epoch milliseconds of a UTC calendar date, or undefined when the day does not exist (2026-02-30). */
function utcDateMillis(year: number, month: number, day: number): number | undefined {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // unlike Date.UTC, keeps years 0–99 as they are
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? date.getTime() : undefined;
}

export function parseDateValue(text: string): number | undefined {
  const match = DATE_PATTERN.exec(text);
  return match ? utcDateMillis(Number(match[1]), Number(match[2]), Number(match[3])) : undefined;
}

export function parseDateTimeValue(text: string): number | undefined {
  const match = DATE_TIME_PATTERN.exec(text);
  if (!match) return undefined;
  const [hours, minutes, seconds] = [Number(match[4]), Number(match[5]), Number(match[6] ?? 0)];
  // 24:00 is the end of the day (ISO 8601), the next day's 00:00.
  if (hours > 24 || minutes > 59 || seconds > 59 || (hours === 24 && (minutes > 0 || seconds > 0 || Number(match[7] ?? 0) > 0)))
    return undefined;
  const day = utcDateMillis(Number(match[1]), Number(match[2]), Number(match[3]));
  if (day === undefined) return undefined;
  const [offsetHours, offsetMinutes] = [Number(match[10] ?? 0), Number(match[11] ?? 0)];
  // As before (luxon's ISO parser): any two-digit offset hours and minutes are taken as written.
  const offsetMillis = (match[9] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  const millis = match[7] === undefined ? 0 : Math.floor(Number(`0.${match[7]}`) * 1000);
  return day + ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis - offsetMillis;
}

/** The stored form of a dateTime text (`YYYY-MM-DD HH:mm:ss`, UTC), or undefined when it is not a dateTime. */
export function normalizeDateTimeValue(text: string): string | undefined {
  const millis = parseDateTimeValue(text);
  if (millis === undefined) return undefined;
  const date = new Date(millis);
  const year = date.getUTCFullYear();
  const two = (value: number) => String(value).padStart(2, "0");
  const yearText = year < 0 ? `-${String(-year).padStart(4, "0")}` : String(year).padStart(4, "0");
  return `${yearText}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())} ${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}`;
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
