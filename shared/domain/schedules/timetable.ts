import { DateTime, IANAZone } from "luxon";

/**
 * The timetable of a routing schedule: pure functions, no I/O (ARCHITECTURE.md §5).
 *
 * Wall-clock values (`startTime`, `endTime`, entry dates and times) are read in one IANA time zone.
 * Calendar arithmetic (weekdays, month lengths, ISO weeks, interval counting) is done on civil
 * dates, which luxon represents here as `DateTime`s in UTC (a zone without transitions); only the
 * final step turns a civil date-time into an instant, with these rules:
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
const WALL_CLOCK = "yyyy-MM-dd HH:mm";

/** The shape entries follow: a custom schedule's entries follow its frequency. */
export function effectiveFrequency(schedule: Pick<TimetableInput, "periode" | "frequency">): Exclude<Periode, "custom"> | undefined {
  return schedule.periode === "custom" ? (schedule.frequency ?? undefined) : schedule.periode;
}

/** Parses `Y-m-d H:i` into a civil date-time; undefined when it is not a real calendar date and time. */
export function parseWallClock(value: string): DateTime | undefined {
  if (!/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/.test(value)) return undefined;
  const parsed = DateTime.fromFormat(value, WALL_CLOCK, { zone: "utc" });
  return parsed.isValid ? parsed : undefined;
}

/** Parses `Y-m-d` into a civil date; undefined when it is not a real calendar date. */
export function parseCivilDate(value: string): DateTime | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const parsed = DateTime.fromFormat(value, "yyyy-MM-dd", { zone: "utc" });
  return parsed.isValid ? parsed : undefined;
}

function timeZoneOf(name: string): IANAZone {
  const zone = IANAZone.create(name);
  if (!zone.isValid) throw new RangeError(`Unknown IANA time zone "${name}"`);
  return zone;
}

/** True when `name` is an IANA zone luxon (Intl) knows. */
export function isValidTimeZone(name: string): boolean {
  return IANAZone.isValidZone(name);
}

/**
 * The instant (epoch ms) at which the civil date-time `wall` happens in `zone`, by the gap/fall-back
 * rules above. Offsets are looked up one day either side of the wall clock, which covers every
 * transition of the tz database (no zone changes its offset twice within two days).
 */
function resolveWallClock(wallMs: number, zone: IANAZone): number {
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

function instantOfWallClock(wall: DateTime, zone: IANAZone): number {
  const wallMs = wall.toMillis();
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
function at(day: DateTime, time: string): DateTime {
  const [hour, minute] = time.split(":").map(Number);
  return day.set({ hour: hour ?? 0, minute: minute ?? 0, second: 0, millisecond: 0 });
}

function civilDateOf(instantMs: number, zone: IANAZone): DateTime {
  const local = DateTime.fromMillis(instantMs, { zone });
  return DateTime.utc(local.year, local.month, local.day);
}

/** Index of the frequency period containing `day`, counted from the period containing `anchor`. */
function periodIndex(frequency: Frequency, anchor: DateTime, day: DateTime): number {
  switch (frequency) {
    case "daily":
      return Math.round(day.diff(anchor.startOf("day"), "days").days);
    case "weekly":
      return Math.round(day.startOf("week").diff(anchor.startOf("week"), "days").days / 7);
    case "monthly":
      return day.year * 12 + day.month - (anchor.year * 12 + anchor.month);
  }
}

/** First civil day of period `index` (counted from the anchor's period). */
function periodStart(frequency: Frequency, anchor: DateTime, index: number): DateTime {
  switch (frequency) {
    case "daily":
      return anchor.startOf("day").plus({ days: index });
    case "weekly":
      return anchor.startOf("week").plus({ weeks: index });
    case "monthly":
      return anchor.startOf("month").plus({ months: index });
  }
}

/** Listed wall-clock run times of one period, ascending and without repeats. */
function wallClockRunsOfPeriod(frequency: Frequency, start: DateTime, entries: ScheduleEntry[]): DateTime[] {
  const runs: DateTime[] = [];
  for (const entry of entries) {
    let day: DateTime;
    switch (frequency) {
      case "daily":
        day = start;
        break;
      case "weekly":
        day = start.plus({ days: weekdays.indexOf(entry.day as Weekday) });
        break;
      case "monthly": {
        // A day past the month's end (31 in April, 29–31 in February) runs on the month's last day.
        const dayOfMonth = Math.min(Number(entry.date), start.daysInMonth ?? 28);
        day = start.set({ day: dayOfMonth });
        break;
      }
    }
    for (const time of entry.time) runs.push(at(day, time));
  }
  return uniqueAscending(runs);
}

function uniqueAscending(runs: DateTime[]): DateTime[] {
  const byMillis = new Map(runs.map((run) => [run.toMillis(), run]));
  return [...byMillis.keys()].sort((a, b) => a - b).map((millis) => byMillis.get(millis) as DateTime);
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
    const runs: DateTime[] = [];
    for (const entry of schedule.schedules) {
      const day = entry.date === undefined ? undefined : parseCivilDate(entry.date);
      if (day) for (const time of entry.time) runs.push(at(day, time));
    }
    for (const run of uniqueAscending(runs)) {
      const instant = instantOfWallClock(run, zone);
      if (instant > afterMs) return new Date(instant);
    }
    return undefined;
  }

  const frequency = effectiveFrequency(schedule) as Frequency | undefined;
  const interval = schedule.periode === "custom" ? (schedule.interval ?? undefined) : 1;
  const windowStartWall = schedule.startTime ? parseWallClock(schedule.startTime) : undefined;
  const windowEndWall = schedule.endTime ? parseWallClock(schedule.endTime) : undefined;
  if (!frequency || !interval || interval < 1 || !windowStartWall || !windowEndWall) return undefined;
  const windowStart = instantOfWallClock(windowStartWall, zone);
  const windowEnd = instantOfWallClock(windowEndWall, zone);
  if (windowEnd < windowStart) return undefined;

  const anchor = windowStartWall.startOf("day");
  // Begin one civil day early: a run's instant never lies on an earlier local date than its wall clock.
  const firstDay = civilDateOf(Math.max(afterMs, windowStart), zone).minus({ days: 1 });
  let index = Math.max(0, periodIndex(frequency, anchor, firstDay));
  index = Math.ceil(index / interval) * interval;
  const lastDay = windowEndWall.startOf("day").plus({ days: 1 });

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
  return DateTime.fromMillis(instant.getTime(), { zone: timeZoneOf(timeZone) }).toFormat(WALL_CLOCK);
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
