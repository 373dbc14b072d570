import { refusal } from "#test/support/refusals";
import { describe, expect, it } from "vitest";
import { createHubWithProfiles, schedulingTenant } from "#test/support/scheduling-fixtures";
import { validWeeklySchedule } from "#test/unit/schedules/fixtures";

/**
 * A configuration profile cannot be deleted while a routing schedule names it, and no schedule can
 * be written naming a deleted profile — also when both happen at the same moment (the schedule
 * counts itself on the profile in its own transaction; the delete requires the count to be zero).
 */
describe("Configuration profile delete vs. concurrent schedule writes", () => {
  it.each([1, 2, 3])("round %i: 20 concurrent creates and a delete never leave a schedule on a deleted profile", async () => {
    const { api, profile } = await schedulingTenant();
    const creates = Array.from({ length: 20 }, (_, i) =>
      api.post("/routing/schedule", { ...validWeeklySchedule, name: `s${i}`, configurationId: profile }),
    );
    const deleted = api.delete(`/routing/configuration/${profile}`);
    const [deleteResponse, ...createResponses] = await Promise.all([deleted, ...creates]);
    const created = createResponses.filter((response) => response.status === 201);
    // 20 writers of one profile's count item conflict (strict semantics, as DynamoDB's transactions do): a create
    // whose retries run out answers 503 sys-503 (retry later) and, as every refusal, leaves nothing (counted below).
    for (const response of createResponses) {
      expect([201, 400, 404, 409, 503], JSON.stringify(response.body)).toContain(response.status);
      if (response.status === 503) expect(refusal(response).failedCode).toBe("sys-503");
    }
    const schedules = (await api.get("/routing/schedules?limit=100")).body.data as Array<{ configurationId: string }>;
    expect(schedules).toHaveLength(created.length);
    const profileNow = await api.get(`/routing/configuration/${profile}`);
    if (deleteResponse.status === 200) {
      expect(created).toHaveLength(0);
      expect(refusal(profileNow)).toEqual({ status: 404, failedCode: "sys-404" });
    } else {
      expect(refusal(deleteResponse)).toEqual({ status: 409, failedCode: "configuration-409" });
      expect(profileNow.status).toBe(200);
    }
    // whatever won: every schedule's profile exists
    for (const schedule of schedules) expect((await api.get(`/routing/configuration/${schedule.configurationId}`)).status).toBe(200);
  });

  it("moving a schedule to another profile moves its count; deleting it releases the profile", async () => {
    const { api, organizationId, profile } = await schedulingTenant();
    const { profiles } = await createHubWithProfiles(organizationId, 1, "Second hub");
    const other = profiles[0] as string;
    const schedule = (await api.post("/routing/schedule", { ...validWeeklySchedule, configurationId: profile })).body.data;
    expect(refusal(await api.delete(`/routing/configuration/${profile}`))).toEqual({ status: 409, failedCode: "configuration-409" });
    expect((await api.patch(`/routing/schedule/${schedule._id}`, { configurationId: other })).status).toBe(200);
    expect((await api.delete(`/routing/configuration/${other}`)).body.failedCode).toBe("configuration-409");
    expect((await api.delete(`/routing/configuration/${profile}`)).status).toBe(200);
    // a deleted profile cannot be named again
    expect(refusal(await api.patch(`/routing/schedule/${schedule._id}`, { configurationId: profile }))).toEqual({
      status: 400,
      failedCode: "sys-400",
    });
    expect((await api.delete(`/routing/schedule/${schedule._id}`)).status).toBe(200);
    expect((await api.delete(`/routing/configuration/${other}`)).status).toBe(200);
  });
});
