import { describe, expect, it } from "vitest";
import { permissionSlugs } from "#functions/routes";
import { type ApiClient, apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { createHubWithProfiles, schedulingTenant } from "#test/support/scheduling-fixtures";
import { invalidScheduleBodies, scheduleBody, validWeeklySchedule } from "#test/unit/schedules/fixtures";
import { nextIdSecond } from "#test/support/id-order";
import { expectRefused, refusal } from "#test/support/refusals";

const unknownId = "0123456789abcdef01234567";

async function createSchedule(api: ApiClient, configurationId: string, overrides: Record<string, unknown> = {}) {
  const response = await api.post("/routing/schedule", scheduleBody({ configurationId, ...overrides }));
  expect(response.status).toBe(201);
  return response.body.data;
}

async function listAll(api: ApiClient, query = "") {
  const response = await api.get(`/routing/schedules${query}`);
  expect(response.status).toBe(200);
  return response.body.data as Array<Record<string, unknown>>;
}

const expectBadRequestNaming = (response: { status: number; body: any }, field: string) => {
  expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
  expect(response.body).toMatchObject({ status: false, message: "Bad request - invalid parameters provided." });
  expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
};

describe("Routing schedules API", () => {
  describe("POST /routing/schedule", () => {
    it("creates a schedule with its timetable, next run and defaults", async () => {
      const { api, organizationId, profile } = await schedulingTenant({ sub: "planner-1" });
      const response = await api.post("/routing/schedule", { ...validWeeklySchedule, configurationId: profile, autoDispatch: undefined });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ status: true, message: "Routing schedule has been added successfully." });
      const schedule = response.body.data;
      expect(schedule._id).toMatch(/^[0-9a-f]{24}$/);
      expect(schedule).toMatchObject({
        name: "Morning routing",
        configurationId: profile,
        periode: "weekly",
        schedules: validWeeklySchedule.schedules,
        startTime: "2026-01-01 00:00",
        endTime: "2030-12-31 23:59",
        frequency: null,
        interval: null,
        autoDispatch: false,
        active: true,
        timeSchedules: ["monday 07:00", "monday 13:00", "friday 07:00"],
        organizationId,
        createdBy: "planner-1",
      });
      // The test stack runs in UTC unless APP_TIMEZONE says otherwise: the next Monday or Friday at 07:00/13:00.
      expect(schedule.nextRunTime).toMatch(/^\d{4}-\d{2}-\d{2} (07|13):00$/);
      expect(new Date(`${schedule.nextRunTime.replace(" ", "T")}:00Z`).getTime()).toBeGreaterThan(Date.now() - 60_000);
      expect(schedule.createdTime).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      expect(schedule).not.toHaveProperty("logExecuted");
      for (const storage of ["PK", "SK", "GSI1PK", "GSI1SK", "version", "entity", "nextRunAt"])
        expect(schedule).not.toHaveProperty(storage);
    });

    it("ignores read-only fields sent by the client", async () => {
      const { api, organizationId, profile } = await schedulingTenant();
      const schedule = await createSchedule(api, profile, {
        _id: unknownId,
        timeSchedules: ["sunday 01:00"],
        nextRunTime: "2020-01-01 00:00",
        logExecuted: { status: "success" },
        organizationId: "someone-else",
        createdBy: "mallory",
      });
      expect(schedule._id).not.toBe(unknownId);
      expect(schedule.timeSchedules).toEqual(["monday 07:00", "monday 13:00", "friday 07:00"]);
      expect(schedule.nextRunTime).not.toBe("2020-01-01 00:00");
      expect(schedule).not.toHaveProperty("logExecuted");
      expect(schedule.organizationId).toBe(organizationId);
      expect(schedule.createdBy).toBe("user-1");
      expect((await api.get(`/routing/schedule/${schedule._id}`)).body.data).toEqual(schedule);
    });

    it.each([
      ["daily", { periode: "daily", schedules: [{ time: ["19:00", "07:00"] }] }, ["07:00", "19:00"]],
      [
        "monthly",
        {
          periode: "monthly",
          schedules: [
            { date: "31", time: ["07:00"] },
            { date: "05", time: ["07:00"] },
          ],
        },
        ["05 07:00", "31 07:00"],
      ],
      ["custom weekly", { periode: "custom", frequency: "weekly", interval: 2 }, ["monday 07:00", "monday 13:00", "friday 07:00"]],
    ])("creates a %s schedule", async (_name, overrides, timeSchedules) => {
      const { api, profile } = await schedulingTenant();
      const schedule = await createSchedule(api, profile, overrides);
      expect(schedule.timeSchedules).toEqual(timeSchedules);
      expect(schedule.nextRunTime).toEqual(expect.any(String));
    });

    it("creates a byDate schedule without a window; past dates give no next run", async () => {
      const { api, profile } = await schedulingTenant();
      const schedule = await createSchedule(api, profile, {
        periode: "byDate",
        startTime: undefined,
        endTime: undefined,
        schedules: [{ date: "2020-12-01", time: ["07:00"] }],
      });
      expect(schedule).toMatchObject({ startTime: null, endTime: null, timeSchedules: ["2020-12-01 07:00"], nextRunTime: null });
    });

    it("rejects a configurationId that is not a profile of the organization, storing nothing", async () => {
      const { api, profile } = await schedulingTenant();
      const foreign = await schedulingTenant();
      for (const configurationId of [unknownId, foreign.profile]) {
        expectBadRequestNaming(await api.post("/routing/schedule", scheduleBody({ configurationId })), "configurationId");
      }
      expect(await listAll(api)).toEqual([]);
      const created = await createSchedule(api, profile);
      expectBadRequestNaming(await api.patch(`/routing/schedule/${created._id}`, { configurationId: foreign.profile }), "configurationId");
      expect((await api.get(`/routing/schedule/${created._id}`)).body.data).toEqual(created);
    });

    it("creates a paused schedule with no next run", async () => {
      const { api, profile } = await schedulingTenant();
      const schedule = await createSchedule(api, profile, { active: false });
      expect(schedule).toMatchObject({ active: false, nextRunTime: null });
    });

    it.each(invalidScheduleBodies)("rejects %s with 400 naming the field, storing nothing", async (_name, overrides, field) => {
      const { api, profile } = await schedulingTenant();
      expectBadRequestNaming(await api.post("/routing/schedule", scheduleBody({ configurationId: profile, ...overrides })), field);
      expect(await listAll(api)).toEqual([]);
    });
  });

  describe("GET /routing/schedule/{scheduleId}", () => {
    it("reads a schedule of the caller's organization", async () => {
      const { api, profile } = await schedulingTenant();
      const created = await createSchedule(api, profile);
      const response = await api.get(`/routing/schedule/${created._id}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status: true, message: "Routing schedule found." });
      expect(response.body.data).toEqual(created);
    });

    it("answers 404 for an unknown id", async () => {
      const { api } = await schedulingTenant();
      const response = await api.get(`/routing/schedule/${unknownId}`);
      expect(refusal(response)).toEqual({ status: 404, failedCode: "sys-404" });
      expect(response.body).toMatchObject({ status: false, message: "Data not found" });
    });
  });

  describe("GET /routing/schedules", () => {
    it("pages through the organization's schedules oldest first", async () => {
      const { api, profile } = await schedulingTenant();
      const created = [];
      for (let i = 0; i < 3; i++) {
        if (i > 0) await nextIdSecond();
        created.push(await createSchedule(api, profile, { name: `S${i}` }));
      }
      const first = await api.get("/routing/schedules?limit=2");
      expect(first.status).toBe(200);
      expect(first.body.data.map((s: { name: string }) => s.name)).toEqual(["S0", "S1"]);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const second = await api.get(`/routing/schedules?limit=2&cursor=${first.body.nextCursor}`);
      expect(second.body.data.map((s: { name: string }) => s.name)).toEqual(["S2"]);
      expect(second.body.nextCursor).toBeNull();
      expect(second.body.data[0]).toEqual(created[2]);
    });

    it("filters by configurationId", async () => {
      const { api, profiles } = await schedulingTenant({}, 2);
      const [a, b] = profiles as [string, string];
      await createSchedule(api, a, { name: "A" });
      await createSchedule(api, b, { name: "B" });
      await nextIdSecond();
      await createSchedule(api, a, { name: "A2" });
      expect((await listAll(api, `?configurationId=${a}`)).map((s) => s.name)).toEqual(["A", "A2"]);
      expect(await listAll(api, `?configurationId=${unknownId}`)).toEqual([]);
    });

    it("pages a configurationId filter with a cursor bound to it", async () => {
      const { api, profile } = await schedulingTenant();
      for (let i = 0; i < 3; i++) {
        if (i > 0) await nextIdSecond();
        await createSchedule(api, profile, { name: `A${i}` });
      }
      const first = await api.get(`/routing/schedules?configurationId=${profile}&limit=2`);
      expect(first.body.data).toHaveLength(2);
      const second = await api.get(`/routing/schedules?configurationId=${profile}&limit=2&cursor=${first.body.nextCursor}`);
      expect(second.body.data.map((s: { name: string }) => s.name)).toEqual(["A2"]);
      // the same cursor on the unfiltered list is not a cursor of that list
      const misused = await api.get(`/routing/schedules?limit=2&cursor=${first.body.nextCursor}`);
      expectBadRequestNaming(misused, "cursor");
    });

    it("filters by hubId through the hub's configuration profiles", async () => {
      const { api, organizationId, hubId, profile } = await schedulingTenant();
      const other = await createHubWithProfiles(organizationId, 1, "North hub");
      await createSchedule(api, profile, { name: "Main" });
      await createSchedule(api, other.profiles[0] as string, { name: "North" });
      expect((await listAll(api, `?hubId=${hubId}`)).map((s) => s.name)).toEqual(["Main"]);
      expect((await listAll(api, `?hubId=${other.hubId}`)).map((s) => s.name)).toEqual(["North"]);
      expect(await listAll(api, `?hubId=${hubId}&configurationId=${other.profiles[0]}`)).toEqual([]);
      expect(await listAll(api, "?hubId=no-such-hub")).toEqual([]);
    });

    it("rejects a hubId the token does not allow", async () => {
      const { api } = newTenant({ hubIds: ["hub-b"] });
      expectBadRequestNaming(await api.get("/routing/schedules?hubId=hub-a"), "hubId");
    });

    it.each([
      ["limit 0", "?limit=0", "limit"],
      ["limit 101", "?limit=101", "limit"],
      ["limit not a number", "?limit=ten", "limit"],
      ["unknown query parameter", "?periode=daily", "periode"],
      ["garbage cursor", "?cursor=not-a-cursor", "cursor"],
    ])("rejects %s", async (_name, query, field) => {
      const { api } = await schedulingTenant();
      expectBadRequestNaming(await api.get(`/routing/schedules${query}`), field);
    });
  });

  describe("PUT /routing/schedule/{scheduleId}", () => {
    it("replaces every field, resetting omitted ones to defaults and keeping id, creator and creation time", async () => {
      const { api, profiles } = await schedulingTenant({}, 2);
      const [profile, second] = profiles as [string, string];
      const created = await createSchedule(api, profile, { autoDispatch: true, active: false });
      const response = await api.put(`/routing/schedule/${created._id}`, {
        name: "Evening routing",
        configurationId: second,
        periode: "monthly",
        schedules: [{ date: "31", time: ["18:00"] }],
        startTime: "2026-01-01 00:00",
        endTime: "2035-01-01 00:00",
      });
      expect(response.status).toBe(200);
      expect(response.body.message).toBe("Routing schedule has been updated successfully.");
      expect(response.body.data).toMatchObject({
        _id: created._id,
        name: "Evening routing",
        configurationId: second,
        periode: "monthly",
        autoDispatch: false,
        active: true,
        timeSchedules: ["31 18:00"],
        createdBy: created.createdBy,
        createdTime: created.createdTime,
      });
      expect(response.body.data.nextRunTime).toMatch(/^\d{4}-\d{2}-(28|29|30|31) 18:00$/);
      expect((await api.get(`/routing/schedule/${created._id}`)).body.data).toEqual(response.body.data);
    });

    it.each(invalidScheduleBodies)("rejects %s with 400 naming the field, changing nothing", async (_name, overrides, field) => {
      const { api, profile } = await schedulingTenant();
      const created = await createSchedule(api, profile);
      expectBadRequestNaming(
        await api.put(`/routing/schedule/${created._id}`, scheduleBody({ configurationId: profile, ...overrides })),
        field,
      );
      expect((await api.get(`/routing/schedule/${created._id}`)).body.data).toEqual(created);
    });

    it("answers 404 for an unknown id", async () => {
      const { api, profile } = await schedulingTenant();
      await expectRefused(
        api,
        { method: "PUT", path: `/routing/schedule/${unknownId}`, body: { ...validWeeklySchedule, configurationId: profile } },
        { status: 404, failedCode: "sys-404" },
      );
    });
  });

  describe("PATCH /routing/schedule/{scheduleId}", () => {
    it("changes only the fields sent and recomputes the derived ones", async () => {
      const { api, profile } = await schedulingTenant();
      const created = await createSchedule(api, profile);
      const response = await api.patch(`/routing/schedule/${created._id}`, {
        schedules: [{ day: "sunday", time: ["06:00"] }],
        name: "Sunday",
      });
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({
        name: "Sunday",
        configurationId: created.configurationId,
        autoDispatch: created.autoDispatch,
        timeSchedules: ["sunday 06:00"],
      });
      expect(response.body.data.nextRunTime).toMatch(/ 06:00$/);
    });

    it("pauses and resumes a schedule", async () => {
      const { api, profile } = await schedulingTenant();
      const created = await createSchedule(api, profile);
      const paused = await api.patch(`/routing/schedule/${created._id}`, { active: false });
      expect(paused.body.data).toMatchObject({ active: false, nextRunTime: null, timeSchedules: created.timeSchedules });
      const resumed = await api.patch(`/routing/schedule/${created._id}`, { active: true });
      expect(resumed.body.data).toMatchObject({ active: true, nextRunTime: created.nextRunTime });
    });

    it("switches to custom and back, clearing frequency and interval with null", async () => {
      const { api, profile } = await schedulingTenant();
      const created = await createSchedule(api, profile);
      const custom = await api.patch(`/routing/schedule/${created._id}`, { periode: "custom", frequency: "weekly", interval: 3 });
      expect(custom.body.data).toMatchObject({ periode: "custom", frequency: "weekly", interval: 3 });
      const weekly = await api.patch(`/routing/schedule/${created._id}`, { periode: "weekly", frequency: null, interval: null });
      expect(weekly.body.data).toMatchObject({ periode: "weekly", frequency: null, interval: null });
    });

    it.each<[string, Record<string, unknown>, string]>([
      ["an empty patch", {}, "body"],
      ["only read-only fields", { timeSchedules: [] }, "body"],
      ["a periode whose entry shape the stored entries do not fit", { periode: "monthly" }, "schedules.0.date"],
      ["custom without interval", { periode: "custom", frequency: "weekly" }, "interval"],
      ["a window that ends before it starts", { endTime: "2025-01-01 00:00" }, "endTime"],
      ["clearing a required window", { startTime: null }, "startTime"],
      ["a blank name", { name: "  " }, "name"],
      ["an invalid time", { schedules: [{ day: "monday", time: ["25:00"] }] }, "schedules.0.time.0"],
      ["an unknown field", { colour: "red" }, "colour"],
    ])("rejects %s with 400 naming the field, changing nothing", async (_name, patch, field) => {
      const { api, profile } = await schedulingTenant();
      const created = await createSchedule(api, profile);
      expectBadRequestNaming(await api.patch(`/routing/schedule/${created._id}`, patch), field);
      expect((await api.get(`/routing/schedule/${created._id}`)).body.data).toEqual(created);
    });

    it("clears the name with null: the schedule takes its configuration profile's name", async () => {
      const { api, profile } = await schedulingTenant();
      const created = await createSchedule(api, profile);
      const cleared = await api.patch(`/routing/schedule/${created._id}`, { name: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body.data.name).toBe("Main hub plan 1");
    });

    it("answers 404 for an unknown id", async () => {
      const { api } = await schedulingTenant();
      await expectRefused(
        api,
        { method: "PATCH", path: `/routing/schedule/${unknownId}`, body: { active: false } },
        { status: 404, failedCode: "sys-404" },
      );
    });
  });

  describe("DELETE /routing/schedule/{scheduleId}", () => {
    it("deletes the schedule", async () => {
      const { api, profile } = await schedulingTenant();
      const created = await createSchedule(api, profile);
      const response = await api.delete(`/routing/schedule/${created._id}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status: true, message: "Routing schedule has been deleted successfully." });
      expect(refusal(await api.get(`/routing/schedule/${created._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      await expectRefused(api, { method: "DELETE", path: `/routing/schedule/${created._id}` }, { status: 404, failedCode: "sys-404" });
      expect(await listAll(api)).toEqual([]);
    });
  });

  describe("tenancy", () => {
    it("another organization cannot read, list, replace, patch or delete the schedule", async () => {
      const owner = await schedulingTenant();
      const other = newTenant();
      const schedule = await createSchedule(owner.api, owner.profile);
      expect(refusal(await other.api.get(`/routing/schedule/${schedule._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await other.api.put(`/routing/schedule/${schedule._id}`, validWeeklySchedule))).toEqual({
        status: 404,
        failedCode: "sys-404",
      });
      expect(refusal(await other.api.patch(`/routing/schedule/${schedule._id}`, { active: false }))).toEqual({
        status: 404,
        failedCode: "sys-404",
      });
      expect(refusal(await other.api.delete(`/routing/schedule/${schedule._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(await listAll(other.api)).toEqual([]);
      expect(await listAll(other.api, `?configurationId=${owner.profile}`)).toEqual([]);
      expect((await owner.api.get(`/routing/schedule/${schedule._id}`)).body.data).toEqual(schedule);
    });

    it("a hub-restricted token sees and changes only the schedules of its hubs' profiles", async () => {
      const owner = await schedulingTenant();
      const north = await createHubWithProfiles(owner.organizationId, 1, "North hub");
      const mainSchedule = await createSchedule(owner.api, owner.profile, { name: "Main" });
      const northSchedule = await createSchedule(owner.api, north.profiles[0] as string, { name: "North" });
      const northOnly = apiClient(tokenFor({ organizationId: owner.organizationId, hubIds: [north.hubId] }));

      expect((await listAll(northOnly)).map((s) => s.name)).toEqual(["North"]);
      expect((await northOnly.get(`/routing/schedule/${northSchedule._id}`)).status).toBe(200);
      expect(refusal(await northOnly.get(`/routing/schedule/${mainSchedule._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await northOnly.patch(`/routing/schedule/${mainSchedule._id}`, { active: false }))).toEqual({
        status: 404,
        failedCode: "sys-404",
      });
      expect(refusal(await northOnly.delete(`/routing/schedule/${mainSchedule._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect((await owner.api.get(`/routing/schedule/${mainSchedule._id}`)).body.data).toEqual(mainSchedule);
      expectBadRequestNaming(
        await northOnly.post("/routing/schedule", scheduleBody({ configurationId: owner.profile })),
        "configurationId",
      );
      expectBadRequestNaming(
        await northOnly.patch(`/routing/schedule/${northSchedule._id}`, { configurationId: owner.profile }),
        "configurationId",
      );
      expect((await owner.api.get(`/routing/schedule/${mainSchedule._id}`)).body.data).toEqual(mainSchedule);
      expect((await owner.api.get(`/routing/schedule/${northSchedule._id}`)).body.data).toEqual(northSchedule);
    });

    it("rejects another organization's cursor", async () => {
      const owner = await schedulingTenant();
      for (let i = 0; i < 2; i++) await createSchedule(owner.api, owner.profile);
      const firstPage = await owner.api.get("/routing/schedules?limit=1");
      const other = newTenant();
      expectBadRequestNaming(await other.api.get(`/routing/schedules?limit=1&cursor=${firstPage.body.nextCursor}`), "cursor");
    });
  });

  describe("permissions", () => {
    const routes: Array<
      [string, string, string, (api: ApiClient, id: string, configurationId: string) => Promise<{ status: number; body: any }>]
    > = [
      ["GET /routing/schedules", "view/routing-schedule", "list", (api) => api.get("/routing/schedules")],
      ["GET /routing/schedule/{id}", "view/routing-schedule", "get", (api, id) => api.get(`/routing/schedule/${id}`)],
      [
        "POST /routing/schedule",
        "add/routing-schedule",
        "create",
        (api, _id, configurationId) => api.post("/routing/schedule", { ...validWeeklySchedule, configurationId }),
      ],
      [
        "PUT /routing/schedule/{id}",
        "edit/routing-schedule",
        "replace",
        (api, id, configurationId) => api.put(`/routing/schedule/${id}`, { ...validWeeklySchedule, configurationId, name: "x" }),
      ],
      ["PATCH /routing/schedule/{id}", "edit/routing-schedule", "patch", (api, id) => api.patch(`/routing/schedule/${id}`, { name: "x" })],
      ["DELETE /routing/schedule/{id}", "delete/routing-schedule", "delete", (api, id) => api.delete(`/routing/schedule/${id}`)],
    ];

    it.each(routes)("%s without %s answers 403 sys-035 and changes nothing", async (_route, permission, _verb, call) => {
      const { api, organizationId, profile } = await schedulingTenant();
      const schedule = await createSchedule(api, profile);
      const withoutPermission = apiClient(tokenFor({ organizationId, permissions: permissionSlugs.filter((slug) => slug !== permission) }));
      const response = await call(withoutPermission, schedule._id, profile);
      expect(response.status).toBe(403);
      expect(response.body).toMatchObject({ status: false, failedCode: "sys-035", message: expect.any(String) });
      expect(await listAll(api)).toEqual([schedule]);
    });

    it.each(routes)("%s needs only %s", async (_route, permission, verb, call) => {
      const { api, organizationId, profile } = await schedulingTenant();
      const schedule = await createSchedule(api, profile);
      const onlyThat = apiClient(tokenFor({ organizationId, permissions: [permission] }));
      const response = await call(onlyThat, schedule._id, profile);
      expect(response.status).toBe(verb === "create" ? 201 : 200);
    });

    it("is checked before anything is read or validated", async () => {
      const { organizationId } = newTenant();
      const noPermissions = apiClient(tokenFor({ organizationId, permissions: [] }));
      // an unknown id would be 404 and an invalid body 400: the permission answers first
      expect((await noPermissions.get(`/routing/schedule/${unknownId}`)).body.failedCode).toBe("sys-035");
      expect((await noPermissions.post("/routing/schedule", { name: "" })).body.failedCode).toBe("sys-035");
      expect((await noPermissions.patch(`/routing/schedule/${unknownId}`, {})).body.failedCode).toBe("sys-035");
      expect(refusal(await noPermissions.delete(`/routing/schedule/${unknownId}`))).toEqual({ status: 403, failedCode: "sys-035" });
    });

    it.each([
      ["GET", "/routing/schedules"],
      ["GET", `/routing/schedule/${unknownId}`],
      ["POST", "/routing/schedule"],
      ["PUT", `/routing/schedule/${unknownId}`],
      ["PATCH", `/routing/schedule/${unknownId}`],
      ["DELETE", `/routing/schedule/${unknownId}`],
    ])("%s %s without a token answers 401", async (method, path) => {
      const response = await apiClient(undefined).request(
        method,
        path,
        method === "GET" || method === "DELETE" ? {} : { body: validWeeklySchedule },
      );
      expect(refusal(response)).toEqual({ status: 401, failedCode: "sys-401" });
      expect(response.body.status).toBe(false);
    });
  });
});
