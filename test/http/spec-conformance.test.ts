import { describe, expect, it } from "vitest";
import { schedulingTenant } from "#test/support/scheduling-fixtures";

/**
 * Requests written from the text of the spec (../shared/spec/field-operations-api.md) alone: a
 * client that sends exactly what the spec shows must succeed. Each test quotes the clause it
 * follows. Stored values are checked too: liberal in what is accepted, strict in what is stored.
 */

describe("Spec conformance: routing schedules", () => {
  // "Routing schedule name property: not shown (the name is used only in result naming)."
  it("creates a schedule without a name, named after its configuration profile", async () => {
    const { api, profile } = await schedulingTenant();
    const response = await api.post("/routing/schedule", {
      configurationId: profile,
      periode: "daily",
      schedules: [{ time: ["07:00"] }],
      startTime: "2026-01-01 00:00",
      endTime: "2030-12-31 23:59",
      autoDispatch: false,
    });
    expect(response.status).toBe(201);
    // The profile created by schedulingTenant is "Main hub plan 1".
    expect(response.body.data.name).toBe("Main hub plan 1");
    const read = await api.get(`/routing/schedule/${response.body.data._id}`);
    expect(read.body.data.name).toBe("Main hub plan 1");
  });

  // byDate: "Active window: not used, dates are absolute" — the window is accepted and not stored.
  it("accepts startTime/endTime with byDate and stores them as null", async () => {
    const { api, profile } = await schedulingTenant();
    const response = await api.post("/routing/schedule", {
      configurationId: profile,
      periode: "byDate",
      schedules: [{ date: "2030-12-01", time: ["07:00"] }],
      startTime: "2026-01-01 00:00",
      endTime: "2030-12-31 23:59",
      autoDispatch: true,
    });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ startTime: null, endTime: null, timeSchedules: ["2030-12-01 07:00"], nextRunTime: "2030-12-01 07:00" });
    const read = await api.get(`/routing/schedule/${response.body.data._id}`);
    expect(read.body.data).toMatchObject({ startTime: null, endTime: null });
  });

  // "frequency — Used with periode = custom", "interval — Used with periode = custom": a form that
  // always sends them with another periode is accepted; they are not stored.
  it("accepts frequency/interval with a periode other than custom and stores them as null", async () => {
    const { api, profile } = await schedulingTenant();
    const response = await api.post("/routing/schedule", {
      name: "Weekly",
      configurationId: profile,
      periode: "weekly",
      schedules: [{ day: "monday", time: ["07:00"] }],
      startTime: "2026-01-01 00:00",
      endTime: "2030-12-31 23:59",
      frequency: "weekly",
      interval: 1,
      autoDispatch: false,
    });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ periode: "weekly", frequency: null, interval: null });
    const patched = await api.patch(`/routing/schedule/${response.body.data._id}`, { periode: "daily", schedules: [{ time: ["08:00"] }], interval: 1 });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ periode: "daily", frequency: null, interval: null });
  });
});
