import fc from "fast-check";
import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { formatWallClock, nextRunAfter, type TimetableInput, weekdays } from "#shared/domain/schedules/timetable";

/**
 * Properties of nextRunAfter over random schedules in zones with and without daylight saving
 * (including 30-minute DST in Lord Howe and a midnight transition in Santiago):
 *
 * 1. successive calls are strictly increasing;
 * 2. every run falls on a listed time of an active day, or is the first minute after a DST gap
 *    that swallowed a listed time;
 * 3. every run inside the window whose wall clock is unaffected by DST (no transition within a day)
 *    is produced — nothing listed is skipped.
 *
 * The reference below enumerates listed wall clocks day by day with its own naive calendar rules,
 * independent of the period arithmetic in the implementation.
 */
const zones = ["UTC", "Asia/Jakarta", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Santiago", "Asia/Kolkata"];
const WALL = "yyyy-MM-dd HH:mm";
const MAX_RUNS = 40;

const timeArb = fc.oneof(
  // times around DST transitions, to hit gaps and repeats often
  fc.constantFrom("00:00", "00:30", "01:00", "01:30", "01:59", "02:00", "02:15", "02:30", "02:59", "03:00", "23:59"),
  fc
    .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
    .map(([h, m]) => `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`),
);
const timesArb = fc.uniqueArray(timeArb, { minLength: 1, maxLength: 3 });
const monthDayArb = fc.oneof(
  fc.constantFrom("28", "29", "30", "31"),
  fc.integer({ min: 1, max: 31 }).map((d) => String(d).padStart(2, "0")),
);

const entriesArb = (shape: "daily" | "weekly" | "monthly" | "byDate") => {
  switch (shape) {
    case "daily":
      return timesArb.map((time) => [{ time }]);
    case "weekly":
      return fc
        .uniqueArray(fc.constantFrom(...weekdays), { minLength: 1, maxLength: 3 })
        .chain((days) => fc.tuple(...days.map(() => timesArb)).map((times) => days.map((day, i) => ({ day, time: times[i] as string[] }))));
    case "monthly":
      return fc
        .uniqueArray(monthDayArb, { minLength: 1, maxLength: 3 })
        .chain((dates) =>
          fc.tuple(...dates.map(() => timesArb)).map((times) => dates.map((date, i) => ({ date, time: times[i] as string[] }))),
        );
    case "byDate":
      return fc.uniqueArray(fc.integer({ min: 0, max: 700 }), { minLength: 1, maxLength: 8 }).chain((offsets) =>
        fc.tuple(...offsets.map(() => timesArb)).map((times) =>
          offsets.map((offset, i) => ({
            date: DateTime.utc(2026, 1, 1).plus({ days: offset }).toISODate() as string,
            time: times[i] as string[],
          })),
        ),
      );
  }
};

const scheduleArb: fc.Arbitrary<TimetableInput> = fc
  .record({
    periode: fc.constantFrom("daily", "weekly", "monthly", "byDate", "custom") as fc.Arbitrary<TimetableInput["periode"]>,
    frequency: fc.constantFrom("daily", "weekly", "monthly") as fc.Arbitrary<"daily" | "weekly" | "monthly">,
    interval: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 5, max: 99 })),
    startDay: fc.integer({ min: 0, max: 600 }),
    startTime: timeArb,
    lengthDays: fc.integer({ min: 0, max: 400 }),
    endTime: timeArb,
  })
  .chain((base) =>
    entriesArb(base.periode === "custom" ? base.frequency : base.periode).map((schedules): TimetableInput => {
      if (base.periode === "byDate") return { periode: "byDate", schedules };
      const start = DateTime.utc(2026, 1, 1).plus({ days: base.startDay });
      let startTime = `${start.toISODate()} ${base.startTime}`;
      let endTime = `${start.plus({ days: base.lengthDays }).toISODate()} ${base.endTime}`;
      if (endTime <= startTime) [startTime, endTime] = [endTime, startTime];
      return {
        periode: base.periode,
        schedules,
        startTime,
        endTime,
        ...(base.periode === "custom" ? { frequency: base.frequency, interval: base.interval } : {}),
      };
    }),
  );

function civilDate(isoDate: string): DateTime {
  const [year, month, day] = isoDate.split("-").map(Number);
  return DateTime.utc(year as number, month as number, day as number);
}

/** Naive reference: the listed wall clocks (`Y-m-d H:i`) of one civil date. */
function listedOn(schedule: TimetableInput, day: DateTime): string[] {
  const shape = schedule.periode === "custom" ? schedule.frequency : schedule.periode;
  const interval = schedule.periode === "custom" ? (schedule.interval as number) : 1;
  const date = day.toISODate() as string;
  const anchor = schedule.startTime ? civilDate(schedule.startTime.slice(0, 10)) : undefined;
  const mondayOf = (d: DateTime) => d.minus({ days: d.weekday - 1 });
  let active = true;
  if (anchor && interval > 1) {
    if (shape === "daily") active = Math.round(day.diff(anchor, "days").days) % interval === 0;
    if (shape === "weekly") active = (Math.round(mondayOf(day).diff(mondayOf(anchor), "days").days) / 7) % interval === 0;
    if (shape === "monthly") active = (day.year * 12 + day.month - anchor.year * 12 - anchor.month) % interval === 0;
  }
  if (!active) return [];
  const times = schedule.schedules.flatMap((entry) => {
    switch (shape) {
      case "daily":
        return entry.time;
      case "weekly":
        return weekdays[day.weekday - 1] === entry.day ? entry.time : [];
      case "monthly":
        return Math.min(Number(entry.date), day.daysInMonth as number) === day.day ? entry.time : [];
      case "byDate":
        return entry.date === date ? entry.time : [];
      default:
        return [];
    }
  });
  return [...new Set(times)].map((time) => `${date} ${time}`);
}

/** A wall clock that exists exactly once, with no transition within a day: its instant is unambiguous. */
function plainInstant(wall: string, zone: string): number | undefined {
  const [date, time] = wall.split(" ") as [string, string];
  const [year, month, day] = date.split("-").map(Number);
  const [hour, minute] = time.split(":").map(Number);
  const local = DateTime.fromObject({ year, month, day, hour, minute }, { zone });
  const offsets = [-1, 0, 1].map((days) => local.plus({ days }).offset);
  if (!local.isValid || new Set(offsets).size !== 1 || local.toFormat(WALL) !== wall) return undefined;
  return local.toMillis();
}

function inWindow(schedule: TimetableInput, wall: string): boolean {
  if (schedule.periode === "byDate") return true;
  return (schedule.startTime as string) <= wall && wall <= (schedule.endTime as string);
}

/** The last civil day a listed run can fall on: the window's end, or the latest byDate date. */
function lastListedDay(schedule: TimetableInput): DateTime {
  const last =
    schedule.periode === "byDate"
      ? (schedule.schedules
          .map((entry) => entry.date as string)
          .sort()
          .at(-1) as string)
      : (schedule.endTime as string).slice(0, 10);
  return civilDate(last).plus({ days: 1 });
}

describe("Function: nextRunAfter (properties)", () => {
  it("runs strictly increase, fall on listed times (or a DST gap's first minute) and skip nothing listed", () => {
    fc.assert(
      fc.property(scheduleArb, fc.constantFrom(...zones), fc.integer({ min: -30, max: 500 }), (schedule, zone, startOffsetDays) => {
        const from = DateTime.utc(2026, 1, 1)
          .plus({ days: startOffsetDays, minutes: startOffsetDays * 37 })
          .toJSDate();
        const runs: Date[] = [];
        let cursor = from;
        let exhausted = false;
        for (let i = 0; i < MAX_RUNS; i++) {
          const next = nextRunAfter(schedule, cursor, zone);
          if (!next) {
            exhausted = true;
            break;
          }
          // 1. strictly increasing
          expect(next.getTime()).toBeGreaterThan(cursor.getTime());
          expect(next.getTime() % 60_000).toBe(0);
          runs.push(next);
          cursor = next;
        }

        // 2. each run is a listed wall clock, or the first minute after a gap that swallowed one
        for (const run of runs) {
          const wall = formatWallClock(run, zone);
          const day = civilDate(wall.slice(0, 10));
          const nearby = [...listedOn(schedule, day.minus({ days: 1 })), ...listedOn(schedule, day)];
          if (nearby.includes(wall)) continue;
          const wallBefore = formatWallClock(new Date(run.getTime() - 60_000), zone);
          const swallowed = nearby.filter((listed) => wallBefore < listed && listed < wall);
          expect(swallowed, `run ${run.toISOString()} (${wall} ${zone}) is neither listed nor after a gap`).not.toEqual([]);
        }

        // 3. nothing plain and listed is skipped between `from` and the last run (or the end, once exhausted)
        const until = exhausted ? Number.POSITIVE_INFINITY : (runs.at(-1) as Date).getTime();
        const produced = new Set(runs.map((run) => run.getTime()));
        const firstDay = DateTime.fromJSDate(from, { zone }).setZone("utc", { keepLocalTime: true }).startOf("day").minus({ days: 1 });
        const lastDay = exhausted
          ? lastListedDay(schedule)
          : DateTime.fromJSDate(runs.at(-1) as Date)
              .toUTC()
              .startOf("day")
              .plus({ days: 2 });
        for (let day = firstDay; day <= lastDay; day = day.plus({ days: 1 })) {
          for (const wall of listedOn(schedule, day)) {
            if (!inWindow(schedule, wall)) continue;
            const instant = plainInstant(wall, zone);
            if (instant === undefined || instant <= from.getTime() || instant > until) continue;
            expect(produced.has(instant), `listed ${wall} (${zone}) was skipped`).toBe(true);
          }
        }
      }),
      { numRuns: 150 },
    );
    // 150 generated timetables × a year of runs each: ~2 s on a quiet core, over 5 s on a busy one.
  }, 60_000);
});
