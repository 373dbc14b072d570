/**
 * The timetable of a routing schedule: pure functions, no I/O (rules in docs/api/routing-schedules.md, "Time rules").
 *
 * Wall-clock values (`startTime`, `endTime`, entry dates and times) are read in one IANA time zone.
 * Calendar arithmetic (weekdays, month lengths, ISO weeks, interval counting) is done on civil
 * date-times, held as the epoch milliseconds they would be in UTC (a zone without transitions);
 * only the final step turns a civil date-time into an instant, with these rules:
 *
 * - a local time that does not exist (spring-forward gap) runs at the first minute after the gap,
 *   i.e. at the transition instant (02:30 on a New York spring-forward day runs at 03:00 EDT);
 * - a local time that exists twice (fall-back) runs once, at its first occurrence;
 * - both rules are monotone, so runs keep their listed order and several listed times that fall into
 *   the same gap collapse into one run.
 */

export const weekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;
export type Weekday = (typeof weekdays)[number];

export const periodes = ["daily", "weekly", "monthly", "byDate", "custom"] as const;
export type Periode = (typeof periodes)[number];

export const frequencies = ["daily", "weekly", "monthly"] as const;
export type Frequency = (typeof frequencies)[number];

/** One element of `schedules`; which of `day`/`date` is used depends on the (effective) periode. */
export interface ScheduleEntry {
  time: string[];
  day?: Weekday | undefined;
  date?: string | undefined;
}

/** The fields of a routing schedule the timetable reads. */
export interface TimetableInput {
  periode: Periode;
  schedules: ScheduleEntry[];
  /** `Y-m-d H:i`, application time zone; required for every periode but byDate. */
  startTime?: string | null | undefined;
  endTime?: string | null | undefined;
  /** custom only: the entry shape and the period unit the interval counts. */
  frequency?: Frequency | null | undefined;
  /** custom only: run every `interval`-th period, counted from the period containing `startTime`. */
  interval?: number | null | undefined;
  /** A paused schedule (`false`) has no next run. Absent means active. */
  active?: boolean | undefined;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** The epoch ms of a civil date-time read as UTC; years 0–99 stay years 0–99 (Date.UTC would read them as 1900–1999). */
function civilMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  const date = new Date(0);
  // setUTCFullYear carries month and day overflow (month 13 is January of the next year).
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

/** Civil parts of a civil ms (the inverse of civilMs). */
function civilParts(ms: number): { year: number; month: number; day: number; hour: number; minute: number } {
  const date = new Date(ms);
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
  };
}

/** The effective shape of a schedule's entries: a custom schedule's follow its frequency. */
export function effectiveFrequency(schedule: Pick<TimetableInput, "periode" | "frequency">): Exclude<Periode, "custom"> | undefined {
  return schedule.periode === "custom" ? (schedule.frequency ?? undefined) : schedule.periode;
}

/**
 * A civil value whose date reads back unchanged (no 2026-02-30). `24:00` is the next day's 00:00,
 * as luxon read it when schedules were first stored: a stored window ending at 24:00 keeps running.
 */
function exactCivil(year: number, month: number, day: number, hour = 0, minute = 0): Date | undefined {
  if (month < 1 || month > 12 || day < 1 || day > 31 || minute > 59 || hour > 24 || (hour === 24 && minute > 0)) return undefined;
  const date = civilMs(year, month, day);
  const parts = civilParts(date);
  return parts.year === year && parts.month === month && parts.day === day
    ? new Date(date + hour * 3_600_000 + minute * MINUTE_MS)
    : undefined;
}

/** Parses `Y-m-d H:i` into a civil date-time (as a UTC Date); undefined when it is not a real calendar date and time. */
export function parseWallClock(value: string): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2})$/.exec(value);
  return match ? exactCivil(Number(match[1]), Number(match[2]), Number(match[3]), Number(match[4]), Number(match[5])) : undefined;
}

/** Parses `Y-m-d` into a civil date (as a UTC Date); undefined when it is not a real calendar date. */
export function parseCivilDate(value: string): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  return match ? exactCivil(Number(match[1]), Number(match[2]), Number(match[3])) : undefined;
}

/** The clock of one IANA zone: its offset from UTC (minutes, east positive) at an instant. */
interface Zone {
  name: string;
  offset(instantMs: number): number;
}

const zones = new Map<string, Zone>();

function timeZoneOf(name: string): Zone {
  let zone = zones.get(name);
  if (!zone) {
    let format: Intl.DateTimeFormat;
    try {
      format = new Intl.DateTimeFormat("en-US", {
        timeZone: name,
        hourCycle: "h23",
        era: "short",
        year: "numeric",
        month: "numeric",
        day: "numeric",
        hour: "numeric",
        minute: "numeric",
        second: "numeric",
      });
    } catch {
      throw new RangeError(`Unknown IANA time zone "${name}"`);
    }
    zone = {
      name,
      // The zone's wall clock at the instant (to the second), read as UTC, minus the instant.
      offset(instantMs) {
        const part: Record<string, string> = {};
        for (const { type, value } of format.formatToParts(new Date(instantMs))) part[type] = value;
        const year = part.era === "BC" || part.era === "B" ? 1 - Number(part.year) : Number(part.year);
        const wall = civilMs(year, Number(part.month), Number(part.day), Number(part.hour) % 24, Number(part.minute), Number(part.second));
        const wholeSeconds = instantMs - (((instantMs % 1000) + 1000) % 1000);
        return (wall - wholeSeconds) / MINUTE_MS;
      },
    };
    zones.set(name, zone);
  }
  return zone;
}

/**
 * The instant (epoch ms) at which the civil date-time `wall` happens in `zone`, by the gap/fall-back
 * rules above. Offsets are looked up one day either side of the wall clock, which covers every
 * transition of the tz database (no zone changes its offset twice within two days).
 */
function resolveWallClock(wallMs: number, zone: Zone): number {
  const offsetBefore = zone.offset(wallMs - DAY_MS);
  const offsetAfter = zone.offset(wallMs + DAY_MS);
  // No transition within a day either side: the wall clock exists exactly once.
  if (offsetBefore === offsetAfter) return wallMs - offsetBefore * MINUTE_MS;
  const matches = [offsetBefore, offsetAfter]
    .map((offset) => wallMs - offset * MINUTE_MS)
    .filter((instant) => zone.offset(instant) * MINUTE_MS === wallMs - instant);
  if (matches.length > 0) return Math.min(...matches);
  // Gap: the wall clock is skipped. The transition lies between reading the wall clock with the new
  // offset (earlier instant, still old offset there) and with the old one (later instant, new offset).
  let low = Math.floor((wallMs - offsetAfter * MINUTE_MS) / MINUTE_MS);
  let high = Math.ceil((wallMs - offsetBefore * MINUTE_MS) / MINUTE_MS);
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (zone.offset(middle * MINUTE_MS) === offsetAfter) high = middle;
    else low = middle;
  }
  return high * MINUTE_MS;
}

/**
 * Resolutions are pure, and a zone offset lookup (Intl) is the expensive step; the scheduler tick
 * resolves the same few wall clocks for many schedules, so results are memoised (bounded).
 */
const resolved = new Map<string, number>();
const MAX_MEMOISED = 20_000;

function instantOfWallClock(wallMs: number, zone: Zone): number {
  const key = `${zone.name}|${wallMs}`;
  let instant = resolved.get(key);
  if (instant === undefined) {
    if (resolved.size >= MAX_MEMOISED) resolved.clear();
    instant = resolveWallClock(wallMs, zone);
    resolved.set(key, instant);
  }
  return instant;
}

/** Civil date-time of `time` (`HH:mm`) on the civil date `day`. */
function at(day: number, time: string): number {
  const [hour, minute] = time.split(":").map(Number);
  return day + (hour ?? 0) * 3_600_000 + (minute ?? 0) * MINUTE_MS;
}

const startOfDay = (civil: number) => civil - (((civil % DAY_MS) + DAY_MS) % DAY_MS);
/** Monday of the ISO week. */
const startOfWeek = (civil: number) => startOfDay(civil) - ((new Date(civil).getUTCDay() + 6) % 7) * DAY_MS;
const daysInMonth = (civil: number) => {
  const { year, month } = civilParts(civil);
  return civilParts(civilMs(year, month + 1, 1) - DAY_MS).day;
};

function civilDateOf(instantMs: number, zone: Zone): number {
  return startOfDay(instantMs + zone.offset(instantMs) * MINUTE_MS);
}

/** Index of the frequency period containing `day`, counted from the period containing `anchor`. */
function periodIndex(frequency: Frequency, anchor: number, day: number): number {
  switch (frequency) {
    case "daily":
      return Math.round((day - startOfDay(anchor)) / DAY_MS);
    case "weekly":
      return Math.round((startOfWeek(day) - startOfWeek(anchor)) / DAY_MS / 7);
    case "monthly": {
      const a = civilParts(anchor);
      const d = civilParts(day);
      return d.year * 12 + d.month - (a.year * 12 + a.month);
    }
  }
}

/** First civil day of period `index` (counted from the anchor's period). */
function periodStart(frequency: Frequency, anchor: number, index: number): number {
  switch (frequency) {
    case "daily":
      return startOfDay(anchor) + index * DAY_MS;
    case "weekly":
      return startOfWeek(anchor) + index * 7 * DAY_MS;
    case "monthly": {
      const { year, month } = civilParts(anchor);
      return civilMs(year, month + index, 1);
    }
  }
}

/** Listed wall-clock run times of one period, ascending and without repeats. */
function wallClockRunsOfPeriod(frequency: Frequency, start: number, entries: ScheduleEntry[]): number[] {
  const runs: number[] = [];
  for (const entry of entries) {
    let day: number;
    switch (frequency) {
      case "daily":
        day = start;
        break;
      case "weekly":
        day = start + weekdays.indexOf(entry.day as Weekday) * DAY_MS;
        break;
      case "monthly":
        // A day past the month's end (31 in April, 29–31 in February) runs on the month's last day.
        day = start + (Math.min(Number(entry.date), daysInMonth(start)) - 1) * DAY_MS;
        break;
    }
    for (const time of entry.time) runs.push(at(day, time));
  }
  return uniqueAscending(runs);
}

function uniqueAscending(runs: number[]): number[] {
  return [...new Set(runs)].sort((a, b) => a - b);
}

/**
 * The first run strictly after `after`, or undefined when none is left (paused, window over, every
 * byDate date past). `timeZone` is the IANA zone the schedule's wall-clock values are read in.
 *
 * - daily / weekly / monthly / custom run only inside the active window `[startTime, endTime]`,
 *   both ends inclusive (the ends are turned into instants by the same gap/fall-back rules);
 * - custom runs in every `interval`-th period counted from the period containing `startTime`:
 *   days (daily), ISO weeks starting Monday (weekly), calendar months (monthly);
 * - byDate runs at its absolute dates; dates in the past never run.
 */
export function nextRunAfter(schedule: TimetableInput, after: Date, timeZone: string): Date | undefined {
  if (schedule.active === false) return undefined;
  const zone = timeZoneOf(timeZone);
  const afterMs = after.getTime();

  if (schedule.periode === "byDate") {
    const runs: number[] = [];
    for (const entry of schedule.schedules) {
      const day = entry.date === undefined ? undefined : parseCivilDate(entry.date);
      if (day) for (const time of entry.time) runs.push(at(day.getTime(), time));
    }
    for (const run of uniqueAscending(runs)) {
      const instant = instantOfWallClock(run, zone);
      if (instant > afterMs) return new Date(instant);
    }
    return undefined;
  }

  const frequency = effectiveFrequency(schedule) as Frequency | undefined;
  const interval = schedule.periode === "custom" ? (schedule.interval ?? undefined) : 1;
  const windowStartWall = schedule.startTime ? parseWallClock(schedule.startTime)?.getTime() : undefined;
  const windowEndWall = schedule.endTime ? parseWallClock(schedule.endTime)?.getTime() : undefined;
  if (!frequency || !interval || interval < 1 || windowStartWall === undefined || windowEndWall === undefined) return undefined;
  const windowStart = instantOfWallClock(windowStartWall, zone);
  const windowEnd = instantOfWallClock(windowEndWall, zone);
  if (windowEnd < windowStart) return undefined;

  const anchor = startOfDay(windowStartWall);
  // Begin one civil day early: a run's instant never lies on an earlier local date than its wall clock.
  const firstDay = civilDateOf(Math.max(afterMs, windowStart), zone) - DAY_MS;
  let index = Math.max(0, periodIndex(frequency, anchor, firstDay));
  index = Math.ceil(index / interval) * interval;
  const lastDay = startOfDay(windowEndWall) + DAY_MS;

  for (let start = periodStart(frequency, anchor, index); start <= lastDay; start = periodStart(frequency, anchor, index)) {
    for (const run of wallClockRunsOfPeriod(frequency, start, schedule.schedules)) {
      const instant = instantOfWallClock(run, zone);
      if (instant > windowEnd) return undefined;
      if (instant > afterMs && instant >= windowStart) return new Date(instant);
    }
    index += interval;
  }
  return undefined;
}

/** An instant as `Y-m-d H:i` on the wall clock of `timeZone` (the `nextRunTime` of responses). */
export function formatWallClock(instant: Date, timeZone: string): string {
  const zone = timeZoneOf(timeZone);
  const local = civilParts(instant.getTime() + zone.offset(instant.getTime()) * MINUTE_MS);
  const two = (value: number) => String(value).padStart(2, "0");
  return `${String(local.year).padStart(4, "0")}-${two(local.month)}-${two(local.day)} ${two(local.hour)}:${two(local.minute)}`;
}

const compareStrings = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The derived, read-only timetable of responses: daily `"07:00"`, weekly `"monday 07:00"`, monthly
 * `"05 07:00"`, byDate `"2026-12-01 07:00"`, custom like its frequency. Sorted chronologically
 * (weekdays Monday first), without repeats.
 */
export function timeSchedules(schedule: Pick<TimetableInput, "periode" | "frequency" | "schedules">): string[] {
  const shape = effectiveFrequency(schedule);
  const labelled = schedule.schedules.flatMap((entry) =>
    entry.time.map((time) => {
      switch (shape) {
        case "weekly":
          return { order: `${weekdays.indexOf(entry.day as Weekday)} ${time}`, label: `${entry.day} ${time}` };
        case "monthly":
        case "byDate":
          return { order: `${entry.date} ${time}`, label: `${entry.date} ${time}` };
        default:
          return { order: time, label: time };
      }
    }),
  );
  const unique = new Map(labelled.map((item) => [item.label, item.order]));
  return [...unique.entries()].sort((a, b) => compareStrings(a[1], b[1])).map(([label]) => label);
}
