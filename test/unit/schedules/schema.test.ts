import { describe, expect, it } from "vitest";
import { schedulePatchSchema, scheduleInputSchema } from "#shared/domain/schedules/schema";
import { invalidScheduleBodies, scheduleBody, validWeeklySchedule } from "./fixtures.ts";

const fieldsOf = (result: ReturnType<typeof scheduleInputSchema.safeParse>) =>
  result.success
    ? []
    : result.error.issues.flatMap((issue) =>
        issue.code === "unrecognized_keys" ? issue.keys.map((key) => [...issue.path, key].join(".")) : [issue.path.join(".")],
      );

describe("Schema: scheduleInputSchema", () => {
  it("accepts a valid weekly schedule and fills the defaults", () => {
    const parsed = scheduleInputSchema.parse({ ...validWeeklySchedule, autoDispatch: undefined });
    expect(parsed).toMatchObject({ frequency: null, interval: null, autoDispatch: false, active: true });
  });

  it.each([
    ["daily", { periode: "daily", schedules: [{ time: ["07:00"] }, { time: ["19:00"] }] }],
    [
      "monthly",
      {
        periode: "monthly",
        schedules: [
          { date: "31", time: ["07:00"] },
          { date: "01", time: ["07:00"] },
        ],
      },
    ],
    ["byDate", { periode: "byDate", startTime: null, endTime: null, schedules: [{ date: "2028-02-29", time: ["07:00"] }] }],
    ["custom weekly", { periode: "custom", frequency: "weekly", interval: 2 }],
    ["custom daily", { periode: "custom", frequency: "daily", interval: 99, schedules: [{ time: ["00:00", "23:59"] }] }],
    ["custom monthly", { periode: "custom", frequency: "monthly", interval: 1, schedules: [{ date: "29", time: ["07:00"] }] }],
    [
      "exactly 100 run times",
      {
        periode: "daily",
        schedules: [
          {
            time: Array.from(
              { length: 100 },
              (_, i) => `${String(Math.floor(i / 60)).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}`,
            ),
          },
        ],
      },
    ],
  ])("accepts %s", (_name, overrides) => {
    expect(scheduleInputSchema.safeParse(scheduleBody(overrides)).success).toBe(true);
  });

  it("takes no name (the spec has none): the service derives it", () => {
    expect(scheduleInputSchema.parse(scheduleBody({ name: undefined })).name).toBeNull();
    expect(scheduleInputSchema.parse(scheduleBody({ name: null })).name).toBeNull();
  });

  it("accepts the active window with byDate and stores null (its dates are absolute)", () => {
    const parsed = scheduleInputSchema.parse(scheduleBody({ periode: "byDate", schedules: [{ date: "2026-12-01", time: ["07:00"] }] }));
    expect(parsed).toMatchObject({ startTime: null, endTime: null });
  });

  it.each(["daily", "weekly", "monthly", "byDate"])("accepts frequency/interval with %s and stores null", (periode) => {
    const schedules = {
      daily: [{ time: ["07:00"] }],
      weekly: [{ day: "monday", time: ["07:00"] }],
      monthly: [{ date: "05", time: ["07:00"] }],
      byDate: [{ date: "2026-12-01", time: ["07:00"] }],
    }[periode];
    const parsed = scheduleInputSchema.parse(scheduleBody({ periode, schedules, frequency: "weekly", interval: 1 }));
    expect(parsed).toMatchObject({ frequency: null, interval: null });
  });

  it("keeps frequency/interval with custom", () => {
    expect(scheduleInputSchema.parse(scheduleBody({ periode: "custom", frequency: "weekly", interval: 2 }))).toMatchObject({
      frequency: "weekly",
      interval: 2,
    });
  });

  it("ignores read-only fields sent by a client", () => {
    const parsed = scheduleInputSchema.parse({
      ...validWeeklySchedule,
      _id: "0123456789abcdef01234567",
      timeSchedules: ["sunday 01:00"],
      nextRunTime: "2020-01-01 00:00",
      logExecuted: { status: "success" },
      organizationId: "other-org",
      createdBy: "someone",
      createdTime: "2020-01-01 00:00:00",
      updatedTime: "2020-01-01 00:00:00",
    });
    for (const field of [
      "_id",
      "timeSchedules",
      "nextRunTime",
      "logExecuted",
      "organizationId",
      "createdBy",
      "createdTime",
      "updatedTime",
    ]) {
      expect(parsed).not.toHaveProperty(field);
    }
  });

  it.each(invalidScheduleBodies)("rejects %s, naming the field", (_name, overrides, field) => {
    expect(fieldsOf(scheduleInputSchema.safeParse(scheduleBody(overrides)))).toContain(field);
  });
});

describe("Schema: schedulePatchSchema", () => {
  it("needs at least one writable field", () => {
    expect(schedulePatchSchema.safeParse({}).success).toBe(false);
    expect(schedulePatchSchema.safeParse({ timeSchedules: [] }).success).toBe(false);
    expect(schedulePatchSchema.safeParse({ active: false }).success).toBe(true);
  });

  it("drops read-only fields", () => {
    expect(schedulePatchSchema.parse({ active: false, nextRunTime: "x" })).toEqual({ active: false });
  });
});
