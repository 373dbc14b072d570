import { describe, expect, it } from "vitest";
import { formatWallClock, nextRunAfter, parseWallClock, type TimetableInput, timeSchedules } from "#shared/domain/schedules/timetable";

const wholeYears = { startTime: "2026-01-01 00:00", endTime: "2028-12-31 23:59" };

const daily = (time: string[], window: Partial<TimetableInput> = wholeYears): TimetableInput => ({
  periode: "daily",
  schedules: [{ time }],
  ...window,
});
const weekly = (entries: Array<[string, string[]]>, window: Partial<TimetableInput> = wholeYears): TimetableInput => ({
  periode: "weekly",
  schedules: entries.map(([day, time]) => ({ day: day as never, time })),
  ...window,
});
const monthly = (entries: Array<[string, string[]]>, window: Partial<TimetableInput> = wholeYears): TimetableInput => ({
  periode: "monthly",
  schedules: entries.map(([date, time]) => ({ date, time })),
  ...window,
});
const byDate = (entries: Array<[string, string[]]>): TimetableInput => ({
  periode: "byDate",
  schedules: entries.map(([date, time]) => ({ date, time })),
});
const custom = (
  frequency: "daily" | "weekly" | "monthly",
  interval: number,
  schedules: TimetableInput["schedules"],
  window: Partial<TimetableInput> = wholeYears,
): TimetableInput => ({ periode: "custom", frequency, interval, schedules, ...window });

/** [case, time zone, schedule, after (ISO instant), expected next run (ISO instant, UTC) or null] */
type Case = [string, string, TimetableInput, string, string | null];

const cases: Case[] = [
  // daily
  ["UTC daily: later time the same day", "UTC", daily(["07:00", "19:00"]), "2026-05-10T08:00:00Z", "2026-05-10T19:00:00Z"],
  ["UTC daily: strictly after a run instant", "UTC", daily(["07:00", "19:00"]), "2026-05-10T19:00:00Z", "2026-05-11T07:00:00Z"],
  ["UTC daily: one millisecond before the run", "UTC", daily(["07:00"]), "2026-05-10T06:59:59.999Z", "2026-05-10T07:00:00Z"],
  ["Jakarta daily: 07:00 WIB is 00:00 UTC", "Asia/Jakarta", daily(["07:00"]), "2026-05-09T23:59:00Z", "2026-05-10T00:00:00Z"],
  ["Jakarta daily: at the run instant → next day", "Asia/Jakarta", daily(["07:00"]), "2026-05-10T00:00:00Z", "2026-05-11T00:00:00Z"],
  ["Jakarta daily: local day ahead of UTC", "Asia/Jakarta", daily(["06:00"]), "2026-05-10T22:00:00Z", "2026-05-10T23:00:00Z"],
  ["Berlin daily: summer offset +2", "Europe/Berlin", daily(["07:00"]), "2026-07-01T00:00:00Z", "2026-07-01T05:00:00Z"],
  ["Berlin daily: winter offset +1", "Europe/Berlin", daily(["07:00"]), "2026-01-15T00:00:00Z", "2026-01-15T06:00:00Z"],
  ["New York daily: winter offset -5", "America/New_York", daily(["07:00"]), "2026-01-15T00:00:00Z", "2026-01-15T12:00:00Z"],
  ["New York daily: summer offset -4", "America/New_York", daily(["07:00"]), "2026-07-15T00:00:00Z", "2026-07-15T11:00:00Z"],

  // spring forward: New York 2026-03-08 02:00 EST → 03:00 EDT (07:00Z)
  [
    "New York spring-forward: 02:30 runs at 03:00 EDT",
    "America/New_York",
    daily(["02:30"]),
    "2026-03-08T00:00:00Z",
    "2026-03-08T07:00:00Z",
  ],
  ["New York spring-forward: day before is EST", "America/New_York", daily(["02:30"]), "2026-03-07T00:00:00Z", "2026-03-07T07:30:00Z"],
  ["New York spring-forward: day after is EDT", "America/New_York", daily(["02:30"]), "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"],
  [
    "New York spring-forward: 02:00 (gap start) runs at 03:00",
    "America/New_York",
    daily(["02:00"]),
    "2026-03-08T06:00:00Z",
    "2026-03-08T07:00:00Z",
  ],
  [
    "New York spring-forward: 02:59 (gap end) runs at 03:00",
    "America/New_York",
    daily(["02:59"]),
    "2026-03-08T06:00:00Z",
    "2026-03-08T07:00:00Z",
  ],
  [
    "New York spring-forward: gap times and 03:00 collapse into one run",
    "America/New_York",
    daily(["02:00", "02:30", "03:00"]),
    "2026-03-08T07:00:00Z",
    "2026-03-09T06:00:00Z",
  ],
  ["New York spring-forward: 01:59 still EST", "America/New_York", daily(["01:59"]), "2026-03-08T00:00:00Z", "2026-03-08T06:59:00Z"],
  // fall back: New York 2026-11-01 02:00 EDT → 01:00 EST (06:00Z); 01:00–01:59 happens twice
  [
    "New York fall-back: 01:30 runs at its first occurrence (EDT)",
    "America/New_York",
    daily(["01:30"]),
    "2026-11-01T00:00:00Z",
    "2026-11-01T05:30:00Z",
  ],
  [
    "New York fall-back: 01:30 does not run again at 01:30 EST",
    "America/New_York",
    daily(["01:30"]),
    "2026-11-01T05:30:00Z",
    "2026-11-02T06:30:00Z",
  ],
  ["New York fall-back: 02:00 exists once (EST)", "America/New_York", daily(["02:00"]), "2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z"],
  // Berlin 2026-03-29 02:00 CET → 03:00 CEST (01:00Z); 2026-10-25 03:00 CEST → 02:00 CET (01:00Z)
  ["Berlin spring-forward: 02:15 runs at 03:00 CEST", "Europe/Berlin", daily(["02:15"]), "2026-03-28T12:00:00Z", "2026-03-29T01:00:00Z"],
  ["Berlin spring-forward: next day back to 02:15", "Europe/Berlin", daily(["02:15"]), "2026-03-29T01:00:00Z", "2026-03-30T00:15:00Z"],
  [
    "Berlin fall-back: 02:30 runs at its first occurrence (CEST)",
    "Europe/Berlin",
    daily(["02:30"]),
    "2026-10-24T12:00:00Z",
    "2026-10-25T00:30:00Z",
  ],
  ["Berlin fall-back: once only", "Europe/Berlin", daily(["02:30"]), "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"],
  ["UTC: no transitions at all", "UTC", daily(["02:30"]), "2026-03-08T00:00:00Z", "2026-03-08T02:30:00Z"],

  // year boundaries
  ["UTC daily: across New Year", "UTC", daily(["23:30"]), "2026-12-31T23:30:00Z", "2027-01-01T23:30:00Z"],
  [
    "Jakarta daily: local New Year while UTC is still 2026",
    "Asia/Jakarta",
    daily(["00:15"]),
    "2026-12-31T17:00:00Z",
    "2026-12-31T17:15:00Z",
  ],
  ["New York daily: New Year's Eve local", "America/New_York", daily(["23:00"]), "2026-12-31T12:00:00Z", "2027-01-01T04:00:00Z"],

  // active window edges (inclusive)
  [
    "window start inclusive",
    "Europe/Berlin",
    daily(["07:00"], { startTime: "2026-06-01 07:00", endTime: "2026-06-30 23:59" }),
    "2026-01-01T00:00:00Z",
    "2026-06-01T05:00:00Z",
  ],
  [
    "window start one minute after the run",
    "Europe/Berlin",
    daily(["07:00"], { startTime: "2026-06-01 07:01", endTime: "2026-06-30 23:59" }),
    "2026-01-01T00:00:00Z",
    "2026-06-02T05:00:00Z",
  ],
  [
    "window end inclusive",
    "Asia/Jakarta",
    daily(["07:00"], { startTime: "2026-06-01 00:00", endTime: "2026-06-30 07:00" }),
    "2026-06-29T00:00:00Z",
    "2026-06-30T00:00:00Z",
  ],
  [
    "window end passed",
    "Asia/Jakarta",
    daily(["07:00"], { startTime: "2026-06-01 00:00", endTime: "2026-06-30 07:00" }),
    "2026-06-30T00:00:00Z",
    null,
  ],
  [
    "window end one minute before the run",
    "Asia/Jakarta",
    daily(["07:00"], { startTime: "2026-06-01 00:00", endTime: "2026-06-30 06:59" }),
    "2026-06-29T00:00:00Z",
    null,
  ],
  [
    "window end in a New York gap resolves like a run",
    "America/New_York",
    daily(["02:30"], { startTime: "2026-03-01 00:00", endTime: "2026-03-08 02:45" }),
    "2026-03-07T12:00:00Z",
    "2026-03-08T07:00:00Z",
  ],
  [
    "window not started: first run is at the window start",
    "UTC",
    daily(["00:00"], { startTime: "2027-01-01 00:00", endTime: "2027-01-31 00:00" }),
    "2026-05-01T00:00:00Z",
    "2027-01-01T00:00:00Z",
  ],
  ["paused schedule never runs", "UTC", { ...daily(["07:00"]), active: false }, "2026-05-10T00:00:00Z", null],

  // weekly
  [
    "UTC weekly: next listed weekday",
    "UTC",
    weekly([
      ["monday", ["07:00"]],
      ["friday", ["08:00", "18:00"]],
    ]),
    "2026-05-13T00:00:00Z",
    "2026-05-15T08:00:00Z",
  ],
  [
    "UTC weekly: wraps to the next week",
    "UTC",
    weekly([
      ["monday", ["07:00"]],
      ["friday", ["08:00", "18:00"]],
    ]),
    "2026-05-15T18:00:00Z",
    "2026-05-18T07:00:00Z",
  ],
  ["UTC weekly: sunday is the last ISO weekday", "UTC", weekly([["sunday", ["07:00"]]]), "2026-05-11T00:00:00Z", "2026-05-17T07:00:00Z"],
  [
    "UTC weekly: across New Year (2027-01-01 is a Friday)",
    "UTC",
    weekly([["friday", ["09:00"]]]),
    "2026-12-31T12:00:00Z",
    "2027-01-01T09:00:00Z",
  ],
  [
    "Jakarta weekly: local Monday 05:00 is Sunday UTC",
    "Asia/Jakarta",
    weekly([["monday", ["05:00"]]]),
    "2026-05-16T00:00:00Z",
    "2026-05-17T22:00:00Z",
  ],
  [
    "New York weekly: Sunday 02:30 on the spring-forward Sunday",
    "America/New_York",
    weekly([["sunday", ["02:30"]]]),
    "2026-03-07T00:00:00Z",
    "2026-03-08T07:00:00Z",
  ],
  [
    "Berlin weekly: Sunday 02:30 on the fall-back Sunday runs once",
    "Europe/Berlin",
    weekly([["sunday", ["02:30"]]]),
    "2026-10-25T00:30:00Z",
    "2026-11-01T01:30:00Z",
  ],

  // monthly
  ["UTC monthly 31 in April runs on the 30th", "UTC", monthly([["31", ["07:00"]]]), "2026-04-01T00:00:00Z", "2026-04-30T07:00:00Z"],
  ["UTC monthly 31 in May runs on the 31st", "UTC", monthly([["31", ["07:00"]]]), "2026-04-30T07:00:00Z", "2026-05-31T07:00:00Z"],
  [
    "UTC monthly 29 in February of a non-leap year → 28th",
    "UTC",
    monthly([["29", ["07:00"]]]),
    "2027-02-01T00:00:00Z",
    "2027-02-28T07:00:00Z",
  ],
  ["UTC monthly 29 in February of a leap year → 29th", "UTC", monthly([["29", ["07:00"]]]), "2028-02-01T00:00:00Z", "2028-02-29T07:00:00Z"],
  ["UTC monthly 31 in February of a leap year → 29th", "UTC", monthly([["31", ["07:00"]]]), "2028-02-01T00:00:00Z", "2028-02-29T07:00:00Z"],
  [
    "UTC monthly 30 and 31 in April run once on the 30th",
    "UTC",
    monthly([
      ["30", ["07:00"]],
      ["31", ["07:00"]],
    ]),
    "2026-04-30T07:00:00Z",
    "2026-05-30T07:00:00Z",
  ],
  ["UTC monthly: across New Year", "UTC", monthly([["15", ["07:00"]]]), "2026-12-20T00:00:00Z", "2027-01-15T07:00:00Z"],
  ["UTC monthly 01: first of the next month", "UTC", monthly([["01", ["00:00"]]]), "2026-12-31T23:59:00Z", "2027-01-01T00:00:00Z"],
  [
    "Berlin monthly 29 at 02:30 on the spring-forward day",
    "Europe/Berlin",
    monthly([["29", ["02:30"]]]),
    "2026-03-01T00:00:00Z",
    "2026-03-29T01:00:00Z",
  ],
  [
    "New York monthly 31 at 22:00 is already June in UTC",
    "America/New_York",
    monthly([["31", ["22:00"]]]),
    "2026-06-01T00:00:00Z",
    "2026-06-01T02:00:00Z",
  ],
  [
    "New York monthly 31 in June (30 days) → 30th",
    "America/New_York",
    monthly([["31", ["22:00"]]]),
    "2026-06-01T02:00:00Z",
    "2026-07-01T02:00:00Z",
  ],
  ["Jakarta monthly 31 in June → 30th local", "Asia/Jakarta", monthly([["31", ["07:00"]]]), "2026-06-01T00:00:00Z", "2026-06-30T00:00:00Z"],

  // byDate (no window)
  [
    "UTC byDate: earliest date first",
    "UTC",
    byDate([
      ["2026-12-01", ["07:00", "09:00"]],
      ["2026-11-15", ["10:00"]],
    ]),
    "2026-01-01T00:00:00Z",
    "2026-11-15T10:00:00Z",
  ],
  [
    "UTC byDate: second time of a date",
    "UTC",
    byDate([["2026-12-01", ["07:00", "09:00"]]]),
    "2026-12-01T07:00:00Z",
    "2026-12-01T09:00:00Z",
  ],
  ["UTC byDate: all dates past", "UTC", byDate([["2026-12-01", ["07:00", "09:00"]]]), "2026-12-01T09:00:00Z", null],
  [
    "New York byDate in the spring-forward gap",
    "America/New_York",
    byDate([["2026-03-08", ["02:30"]]]),
    "2026-03-01T00:00:00Z",
    "2026-03-08T07:00:00Z",
  ],
  ["Berlin byDate on New Year's Day", "Europe/Berlin", byDate([["2027-01-01", ["00:00"]]]), "2026-12-31T12:00:00Z", "2026-12-31T23:00:00Z"],
  ["Jakarta byDate on Feb 29", "Asia/Jakarta", byDate([["2028-02-29", ["06:00"]]]), "2026-01-01T00:00:00Z", "2028-02-28T23:00:00Z"],

  // custom
  [
    "custom daily every 3 days from the window start",
    "UTC",
    custom("daily", 3, [{ time: ["07:00"] }]),
    "2026-01-02T00:00:00Z",
    "2026-01-04T07:00:00Z",
  ],
  [
    "custom daily every 3 days: on the anchor day",
    "UTC",
    custom("daily", 3, [{ time: ["07:00"] }]),
    "2025-12-01T00:00:00Z",
    "2026-01-01T07:00:00Z",
  ],
  [
    "custom daily every 2 days: anchor-day time before the window start skipped",
    "UTC",
    custom("daily", 2, [{ time: ["07:00"] }], { startTime: "2026-01-01 12:00", endTime: "2026-12-31 00:00" }),
    "2025-12-01T00:00:00Z",
    "2026-01-03T07:00:00Z",
  ],
  // 2026-01-01 is a Thursday: its ISO week starts Monday 2025-12-29 (week 0, before the window).
  [
    "custom weekly every 2 weeks: Monday of week 2",
    "UTC",
    custom("weekly", 2, [{ day: "monday", time: ["07:00"] }]),
    "2026-01-01T00:00:00Z",
    "2026-01-12T07:00:00Z",
  ],
  [
    "custom weekly every 2 weeks: skips week 3",
    "UTC",
    custom("weekly", 2, [{ day: "monday", time: ["07:00"] }]),
    "2026-01-12T07:00:00Z",
    "2026-01-26T07:00:00Z",
  ],
  [
    "custom weekly every 2 weeks: week 0 Thursday after the window start",
    "UTC",
    custom("weekly", 2, [{ day: "thursday", time: ["09:00"] }], { startTime: "2026-01-01 08:00", endTime: "2026-12-31 00:00" }),
    "2025-12-01T00:00:00Z",
    "2026-01-01T09:00:00Z",
  ],
  [
    "custom weekly every 2 weeks: week 0 Thursday before the window start skipped",
    "UTC",
    custom("weekly", 2, [{ day: "thursday", time: ["09:00"] }], { startTime: "2026-01-01 10:00", endTime: "2026-12-31 00:00" }),
    "2025-12-01T00:00:00Z",
    "2026-01-15T09:00:00Z",
  ],
  [
    "custom weekly every 3 weeks across New Year",
    "UTC",
    custom("weekly", 3, [{ day: "friday", time: ["09:00"] }], { startTime: "2026-12-14 00:00", endTime: "2027-12-31 00:00" }),
    "2026-12-18T09:00:00Z",
    "2027-01-08T09:00:00Z",
  ],
  [
    "custom weekly every 2 weeks in Berlin across spring-forward",
    "Europe/Berlin",
    custom("weekly", 2, [{ day: "sunday", time: ["02:30"] }], { startTime: "2026-03-23 00:00", endTime: "2026-12-31 00:00" }),
    "2026-03-20T00:00:00Z",
    "2026-03-29T01:00:00Z",
  ],
  [
    "custom weekly every 2 weeks in Berlin: two weeks after the gap, CEST",
    "Europe/Berlin",
    custom("weekly", 2, [{ day: "sunday", time: ["02:30"] }], { startTime: "2026-03-23 00:00", endTime: "2026-12-31 00:00" }),
    "2026-03-29T01:00:00Z",
    "2026-04-12T00:30:00Z",
  ],
  [
    "custom monthly every 3 months, 31 → 30 April",
    "UTC",
    custom("monthly", 3, [{ date: "31", time: ["07:00"] }], { startTime: "2026-01-31 00:00", endTime: "2027-12-31 00:00" }),
    "2026-02-01T00:00:00Z",
    "2026-04-30T07:00:00Z",
  ],
  [
    "custom monthly every 3 months across New Year",
    "UTC",
    custom("monthly", 3, [{ date: "31", time: ["07:00"] }], { startTime: "2026-01-31 00:00", endTime: "2027-12-31 00:00" }),
    "2026-10-31T07:00:00Z",
    "2027-01-31T07:00:00Z",
  ],
  [
    "custom monthly every 12 months on Feb 29 → 28 in 2027",
    "UTC",
    custom("monthly", 12, [{ date: "29", time: ["07:00"] }], { startTime: "2026-02-01 00:00", endTime: "2028-12-31 00:00" }),
    "2026-03-01T00:00:00Z",
    "2027-02-28T07:00:00Z",
  ],
  [
    "custom monthly every 2 months in New York",
    "America/New_York",
    custom("monthly", 2, [{ date: "01", time: ["01:30"] }], { startTime: "2026-09-15 00:00", endTime: "2027-12-31 00:00" }),
    "2026-09-20T00:00:00Z",
    "2026-11-01T05:30:00Z",
  ],
  [
    "custom monthly in Jakarta: window end inclusive",
    "Asia/Jakarta",
    custom("monthly", 1, [{ date: "10", time: ["08:00"] }], { startTime: "2026-01-01 00:00", endTime: "2026-03-10 08:00" }),
    "2026-02-10T01:00:00Z",
    "2026-03-10T01:00:00Z",
  ],
];

describe("Function: nextRunAfter", () => {
  it.each(cases)("%s (%s)", (_name, timeZone, schedule, after, expected) => {
    // Act
    const next = nextRunAfter(schedule, new Date(after), timeZone);
    // Assess
    expect(next?.toISOString() ?? null).toBe(expected === null ? null : new Date(expected).toISOString());
  });

  it("rejects an unknown time zone", () => {
    expect(() => nextRunAfter(daily(["07:00"]), new Date("2026-01-01T00:00:00Z"), "Mars/Olympus")).toThrow(RangeError);
  });
});

describe("Function: parseWallClock", () => {
  it.each([
    ["2026-12-01 07:30", "2026-12-01T07:30:00.000Z"],
    // 24:00 is the next day's midnight, as schedules stored before the move off luxon were read.
    ["2026-12-31 24:00", "2027-01-01T00:00:00.000Z"],
    ["2028-02-29 00:00", "2028-02-29T00:00:00.000Z"],
  ])("reads %s as the civil date-time %s", (text, civil) => {
    expect(parseWallClock(text)?.toISOString()).toBe(civil);
  });

  it.each(["2026-12-01 24:30", "2026-12-01 25:00", "2026-12-01 07:60", "2026-02-29 07:00", "2026-13-01 07:00", "0000-00-00 00:00"])(
    "refuses %s",
    (text) => {
      expect(parseWallClock(text)).toBeUndefined();
    },
  );

  it("keeps a stored window that ends at 24:00 running up to that midnight", () => {
    const schedule = {
      periode: "daily",
      schedules: [{ time: ["23:59"] }],
      startTime: "2026-12-01 00:00",
      endTime: "2026-12-02 24:00",
    } satisfies TimetableInput;
    expect(nextRunAfter(schedule, new Date("2026-12-02T12:00:00Z"), "UTC")?.toISOString()).toBe("2026-12-02T23:59:00.000Z");
    expect(nextRunAfter(schedule, new Date("2026-12-02T23:59:00Z"), "UTC")).toBeUndefined();
  });
});

describe("Function: formatWallClock", () => {
  it.each([
    ["2026-03-08T07:00:00Z", "America/New_York", "2026-03-08 03:00"],
    ["2026-11-01T05:30:00Z", "America/New_York", "2026-11-01 01:30"],
    ["2026-12-31T17:15:00Z", "Asia/Jakarta", "2027-01-01 00:15"],
    ["2026-10-25T00:30:00Z", "Europe/Berlin", "2026-10-25 02:30"],
    ["2026-05-10T07:00:00Z", "UTC", "2026-05-10 07:00"],
  ])("%s in %s is %s", (instant, timeZone, expected) => {
    expect(formatWallClock(new Date(instant), timeZone)).toBe(expected);
  });
});

describe("Function: timeSchedules", () => {
  it.each<[string, Pick<TimetableInput, "periode" | "frequency" | "schedules">, string[]]>([
    [
      "daily, sorted across entries",
      { periode: "daily", schedules: [{ time: ["19:00", "07:00"] }, { time: ["12:00"] }] },
      ["07:00", "12:00", "19:00"],
    ],
    [
      "weekly, Monday first",
      {
        periode: "weekly",
        schedules: [
          { day: "sunday", time: ["07:00"] },
          { day: "monday", time: ["09:00", "08:00"] },
          { day: "friday", time: ["06:00"] },
        ],
      },
      ["monday 08:00", "monday 09:00", "friday 06:00", "sunday 07:00"],
    ],
    [
      "monthly",
      {
        periode: "monthly",
        schedules: [
          { date: "31", time: ["07:00"] },
          { date: "05", time: ["07:00", "06:30"] },
        ],
      },
      ["05 06:30", "05 07:00", "31 07:00"],
    ],
    [
      "byDate",
      {
        periode: "byDate",
        schedules: [
          { date: "2027-01-01", time: ["00:00"] },
          { date: "2026-12-01", time: ["07:00"] },
        ],
      },
      ["2026-12-01 07:00", "2027-01-01 00:00"],
    ],
    ["custom daily like daily", { periode: "custom", frequency: "daily", schedules: [{ time: ["09:00", "08:00"] }] }, ["08:00", "09:00"]],
    [
      "custom weekly like weekly",
      {
        periode: "custom",
        frequency: "weekly",
        schedules: [
          { day: "wednesday", time: ["07:00"] },
          { day: "tuesday", time: ["07:00"] },
        ],
      },
      ["tuesday 07:00", "wednesday 07:00"],
    ],
    [
      "custom monthly like monthly",
      {
        periode: "custom",
        frequency: "monthly",
        schedules: [
          { date: "10", time: ["07:00"] },
          { date: "02", time: ["07:00"] },
        ],
      },
      ["02 07:00", "10 07:00"],
    ],
  ])("%s", (_name, schedule, expected) => {
    expect(timeSchedules(schedule)).toEqual(expected);
  });
});
