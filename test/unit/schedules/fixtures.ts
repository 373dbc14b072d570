/** Request bodies shared by the schema unit tests and the HTTP tests of routing schedules. */

export const validWeeklySchedule = {
  name: "Morning routing",
  configurationId: "conf-1",
  periode: "weekly",
  schedules: [
    { day: "monday", time: ["13:00", "07:00"] },
    { day: "friday", time: ["07:00"] },
  ],
  startTime: "2026-01-01 00:00",
  endTime: "2030-12-31 23:59",
  autoDispatch: true,
};

const weekAt = (times: string[]) =>
  ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].map((day) => ({ day, time: times }));
const fifteenTimes = Array.from({ length: 15 }, (_, i) => `${String(i + 6).padStart(2, "0")}:00`);

/** [case, overrides of validWeeklySchedule (undefined removes the field), field the 400 must name] */
export const invalidScheduleBodies: Array<[string, Record<string, unknown>, string]> = [
  ["blank name", { name: "   " }, "name"],
  ["name over 100 characters", { name: "n".repeat(101) }, "name"],
  ["name not a string", { name: 42 }, "name"],
  ["missing configurationId", { configurationId: undefined }, "configurationId"],
  ["blank configurationId", { configurationId: "" }, "configurationId"],
  ["unknown periode", { periode: "yearly" }, "periode"],
  ["missing periode", { periode: undefined }, "periode"],
  ["missing schedules", { schedules: undefined }, "schedules"],
  ["schedules not an array", { schedules: { day: "monday", time: ["07:00"] } }, "schedules"],
  ["no entry", { schedules: [] }, "schedules"],
  ["entry without times", { schedules: [{ day: "monday", time: [] }] }, "schedules.0.time"],
  ["time 24:00", { schedules: [{ day: "monday", time: ["24:00"] }] }, "schedules.0.time.0"],
  ["time without leading zero", { schedules: [{ day: "monday", time: ["7:00"] }] }, "schedules.0.time.0"],
  ["time with seconds", { schedules: [{ day: "monday", time: ["07:00:00"] }] }, "schedules.0.time.0"],
  ["time repeated within an entry", { schedules: [{ day: "monday", time: ["07:00", "07:00"] }] }, "schedules.0.time"],
  ["unknown entry field", { schedules: [{ day: "monday", time: ["07:00"], hour: 7 }] }, "schedules.0.hour"],
  ["weekly entry without day", { schedules: [{ time: ["07:00"] }] }, "schedules.0.day"],
  ["weekday not lower case", { schedules: [{ day: "Monday", time: ["07:00"] }] }, "schedules.0.day"],
  ["weekday misspelt", { schedules: [{ day: "mon", time: ["07:00"] }] }, "schedules.0.day"],
  [
    "weekly day listed twice",
    {
      schedules: [
        { day: "monday", time: ["07:00"] },
        { day: "monday", time: ["08:00"] },
      ],
    },
    "schedules.1.day",
  ],
  ["weekly entry with a date", { schedules: [{ day: "monday", date: "05", time: ["07:00"] }] }, "schedules.0.date"],
  ["monthly date with one digit", { periode: "monthly", schedules: [{ date: "5", time: ["07:00"] }] }, "schedules.0.date"],
  ["monthly date 32", { periode: "monthly", schedules: [{ date: "32", time: ["07:00"] }] }, "schedules.0.date"],
  ["monthly date 00", { periode: "monthly", schedules: [{ date: "00", time: ["07:00"] }] }, "schedules.0.date"],
  ["monthly entry without date", { periode: "monthly", schedules: [{ time: ["07:00"] }] }, "schedules.0.date"],
  [
    "monthly date listed twice",
    {
      periode: "monthly",
      schedules: [
        { date: "05", time: ["07:00"] },
        { date: "05", time: ["08:00"] },
      ],
    },
    "schedules.1.date",
  ],
  ["monthly entry with a day", { periode: "monthly", schedules: [{ date: "05", day: "monday", time: ["07:00"] }] }, "schedules.0.day"],
  ["daily entry with a day", { periode: "daily", schedules: [{ day: "monday", time: ["07:00"] }] }, "schedules.0.day"],
  ["daily time repeated across entries", { periode: "daily", schedules: [{ time: ["07:00"] }, { time: ["07:00"] }] }, "schedules.1.time"],
  [
    "byDate date that does not exist",
    { periode: "byDate", startTime: undefined, endTime: undefined, schedules: [{ date: "2026-02-30", time: ["07:00"] }] },
    "schedules.0.date",
  ],
  [
    "byDate date in another format",
    { periode: "byDate", startTime: undefined, endTime: undefined, schedules: [{ date: "01-12-2026", time: ["07:00"] }] },
    "schedules.0.date",
  ],
  [
    "byDate date listed twice",
    {
      periode: "byDate",
      startTime: undefined,
      endTime: undefined,
      schedules: [
        { date: "2026-12-01", time: ["07:00"] },
        { date: "2026-12-01", time: ["08:00"] },
      ],
    },
    "schedules.1.date",
  ],
  [
    "byDate with a malformed (unused) window",
    { periode: "byDate", startTime: "tomorrow", schedules: [{ date: "2026-12-01", time: ["07:00"] }] },
    "startTime",
  ],
  ["missing startTime", { startTime: undefined }, "startTime"],
  ["missing endTime", { endTime: undefined }, "endTime"],
  ["startTime in ISO format", { startTime: "2026-01-01T00:00" }, "startTime"],
  ["startTime with seconds", { startTime: "2026-01-01 00:00:00" }, "startTime"],
  ["startTime on a day that does not exist", { startTime: "2026-02-30 10:00" }, "startTime"],
  ["endTime before startTime", { startTime: "2026-06-01 00:00", endTime: "2026-05-31 23:59" }, "endTime"],
  ["endTime equal to startTime", { startTime: "2026-06-01 00:00", endTime: "2026-06-01 00:00" }, "endTime"],
  ["custom without frequency", { periode: "custom", interval: 2 }, "frequency"],
  ["custom without interval", { periode: "custom", frequency: "weekly" }, "interval"],
  ["custom interval 0", { periode: "custom", frequency: "weekly", interval: 0 }, "interval"],
  ["custom interval 100", { periode: "custom", frequency: "weekly", interval: 100 }, "interval"],
  ["custom interval not an integer", { periode: "custom", frequency: "weekly", interval: 1.5 }, "interval"],
  ["custom interval as text", { periode: "custom", frequency: "weekly", interval: "2" }, "interval"],
  ["custom frequency byDate", { periode: "custom", frequency: "byDate", interval: 2 }, "frequency"],
  ["custom monthly with weekly entries", { periode: "custom", frequency: "monthly", interval: 2 }, "schedules.0.date"],
  ["an unknown frequency without custom", { frequency: "hourly" }, "frequency"],
  ["an interval out of range without custom", { interval: 0 }, "interval"],
  ["more than 100 run times", { schedules: weekAt(fifteenTimes) }, "schedules"],
  ["autoDispatch as text", { autoDispatch: "yes" }, "autoDispatch"],
  ["active as text", { active: "false" }, "active"],
  ["unknown field", { color: "red" }, "color"],
];

/** Applies overrides; an undefined override removes the field. */
export function scheduleBody(
  overrides: Record<string, unknown> = {},
  base: Record<string, unknown> = validWeeklySchedule,
): Record<string, unknown> {
  const body: Record<string, unknown> = { ...base, ...overrides };
  for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete body[key];
  return body;
}
