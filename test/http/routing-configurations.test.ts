import { describe, expect, it } from "vitest";
import { findConfiguration, hubConfigurations } from "#shared/app/configurations";
import { type ApiClient, apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { scheduleBody } from "#test/unit/schedules/fixtures";
import { expectRefused, refusal } from "#test/support/refusals";

async function createHub(api: ApiClient, name: string): Promise<string> {
  const response = await api.post("/hub", { name, address: `${name} street 1`, lat: -6.2, lng: 106.8 });
  expect(response.status).toBe(201);
  return response.body.data._id;
}

async function createVehicle(api: ApiClient, hubId: string, name = "Van"): Promise<string> {
  const response = await api.post("/vehicle", { name, hubId });
  expect(response.status).toBe(201);
  return response.body.data._id;
}

/** Profiles name an existing hub and that hub's vehicles: every tenant here starts with two hubs and a vehicle in each. */
async function tenantWithHubs() {
  const tenant = newTenant();
  const hubA = await createHub(tenant.api, "A");
  const hubB = await createHub(tenant.api, "B");
  const vehicleA = await createVehicle(tenant.api, hubA, "Van A");
  const vehicleB = await createVehicle(tenant.api, hubB, "Van B");
  return {
    ...tenant,
    hubA,
    hubB,
    vehicleA,
    vehicleB,
    profile: (overrides: Record<string, unknown> = {}) => ({ ...validProfile, hubId: hubA, vehicleIds: [vehicleA], ...overrides }),
  };
}

const validProfile = {
  name: "Morning run",
  returnToHub: false,
  defaultSpeed: 35,
  defaultVisitTime: 7,
  capacityConstraint: { weight: true, volume: false },
  objective: "distance",
  timeLimitSeconds: 60,
  roadFactor: 1.5,
};

async function createProfile(api: ApiClient, body: Record<string, unknown>) {
  const response = await api.post("/routing/configuration", body);
  expect(response.status).toBe(201);
  return response.body.data;
}

const fields = (response: { body: { errors?: Array<{ field: string }> } }) => (response.body.errors ?? []).map((e) => e.field);
const ids = (response: { body: { data: Array<{ _id: string }> } }) => response.body.data.map((profile) => profile._id);

/** Each case: one invalid field → 400 naming it. */
const invalidBodies: Array<[string, Record<string, unknown>, string]> = [
  ["missing name", { name: undefined }, "name"],
  ["blank name", { name: "" }, "name"],
  ["missing hubId", { hubId: undefined }, "hubId"],
  ["duplicate vehicleIds", { vehicleIds: ["v1", "v1"] }, "vehicleIds"],
  ["more than 95 vehicleIds", { vehicleIds: Array.from({ length: 96 }, (_, i) => `v${i}`) }, "vehicleIds"],
  ["vehicleIds not a list", { vehicleIds: "v1" }, "vehicleIds"],
  ["returnToHub not a boolean", { returnToHub: "yes" }, "returnToHub"],
  ["defaultSpeed below 5", { defaultSpeed: 4 }, "defaultSpeed"],
  ["defaultSpeed above 200", { defaultSpeed: 201 }, "defaultSpeed"],
  ["negative defaultVisitTime", { defaultVisitTime: -1 }, "defaultVisitTime"],
  ["capacityConstraint flag not a boolean", { capacityConstraint: { weight: "yes" } }, "capacityConstraint.weight"],
  ["unknown capacity dimension", { capacityConstraint: { height: true } }, "capacityConstraint.height"],
  ["unknown objective", { objective: "time" }, "objective"],
  ["timeLimitSeconds 0", { timeLimitSeconds: 0 }, "timeLimitSeconds"],
  ["timeLimitSeconds above 240", { timeLimitSeconds: 241 }, "timeLimitSeconds"],
  ["fractional timeLimitSeconds", { timeLimitSeconds: 1.5 }, "timeLimitSeconds"],
  ["roadFactor below 1", { roadFactor: 0.9 }, "roadFactor"],
  ["roadFactor above 3", { roadFactor: 3.1 }, "roadFactor"],
  ["unknown liveDayAssigned policy", { liveDayAssigned: "release" }, "liveDayAssigned"],
  ["liveDayUseIdleVehicles not a boolean", { liveDayUseIdleVehicles: "no" }, "liveDayUseIdleVehicles"],
  ["unknown field", { scheduleId: "x" }, "scheduleId"],
];

describe("Routing configuration profiles API", () => {
  describe("POST /routing/configuration", () => {
    it("creates a profile with the documented defaults", async () => {
      const { api, organizationId, hubA } = await tenantWithHubs();
      const response = await api.post("/routing/configuration", { name: "Daily", hubId: hubA });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ status: true, message: "Configuration profile has been added successfully." });
      const profile = response.body.data;
      expect(profile).toEqual({
        _id: expect.stringMatching(/^[0-9a-f]{24}$/),
        name: "Daily",
        hubId: hubA,
        vehicleIds: [],
        returnToHub: true,
        defaultSpeed: 25,
        defaultVisitTime: 10,
        capacityConstraint: { weight: true, volume: true },
        objective: "hierarchical",
        timeLimitSeconds: 30,
        roadFactor: 1.3,
        travelProvider: null,
        travelFallback: "fail",
        atRiskMinutes: 15,
        etaChangeMinutes: 10,
        autoArrival: false,
        arrivalRadiusMeters: 75,
        liveDayAssigned: "keepVehicle",
        liveDayUseIdleVehicles: true,
        organizationId,
        createdTime: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
        updatedTime: profile.createdTime,
      });
      expect((await api.get(`/routing/configuration/${profile._id}`)).body.data).toEqual(profile);
    });

    it("keeps every field sent", async () => {
      const { api, profile } = await tenantWithHubs();
      expect(await createProfile(api, profile())).toMatchObject(profile());
    });

    it("accepts 95 listed vehicles of the hub (one transaction)", async () => {
      const { api, hubA, profile } = await tenantWithHubs();
      const vehicleIds = await Promise.all(Array.from({ length: 95 }, (_, i) => createVehicle(api, hubA, `V${i}`)));
      expect((await createProfile(api, profile({ vehicleIds }))).vehicleIds).toEqual(vehicleIds);
    });

    it.each(invalidBodies)("rejects %s with 400 naming the field, storing nothing", async (_case, overrides, field) => {
      const { api, profile } = await tenantWithHubs();
      const response = await api.post("/routing/configuration", profile(overrides));
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.message).toBe("Bad request - invalid parameters provided.");
      expect(fields(response)).toContain(field);
      expect((await api.get("/routing/configurations")).body.data).toEqual([]);
    });

    it("rejects a hub that does not exist in the organization", async () => {
      const { api, profile } = await tenantWithHubs();
      const response = await api.post("/routing/configuration", profile({ hubId: "0123456789abcdef01234567", vehicleIds: [] }));
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors).toEqual([{ field: "hubId", message: "hubId must name an existing hub of your organization" }]);
      expect((await api.get("/routing/configurations")).body.data).toEqual([]);
    });

    it("names each listed vehicle that is not a vehicle of the hub (other hub, unknown, other organization)", async () => {
      const { api, vehicleA, vehicleB, profile } = await tenantWithHubs();
      const foreign = await tenantWithHubs();
      const response = await api.post(
        "/routing/configuration",
        profile({ vehicleIds: [vehicleA, vehicleB, "0123456789abcdef01234567", foreign.vehicleA] }),
      );
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(response)).toEqual(["vehicleIds.1", "vehicleIds.2", "vehicleIds.3"]);
      expect(response.body.errors[0].message).toContain(vehicleB);
      expect((await api.get("/routing/configurations")).body.data).toEqual([]);
    });

    it("rejects a hub the token does not allow", async () => {
      const { api, organizationId, hubB, profile } = await tenantWithHubs();
      const restricted = apiClient(tokenFor({ organizationId, hubIds: [hubB] }));
      const response = await restricted.post("/routing/configuration", profile());
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(response)).toEqual(["hubId"]);
      expect((await api.get("/routing/configurations")).body.data).toEqual([]);
    });
  });

  describe("GET /routing/configuration/{configurationId}", () => {
    it("answers 404 for an unknown id", async () => {
      const response = await newTenant().api.get("/routing/configuration/0123456789abcdef01234567");
      expect(refusal(response)).toEqual({ status: 404, failedCode: "sys-404" });
      expect(response.body).toMatchObject({ status: false, message: "Data not found" });
    });

    it("hides profiles of hubs the token does not allow", async () => {
      const { api, organizationId, hubB, profile } = await tenantWithHubs();
      const created = await createProfile(api, profile());
      const restricted = apiClient(tokenFor({ organizationId, hubIds: [hubB] }));
      expect(refusal(await restricted.get(`/routing/configuration/${created._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await restricted.put(`/routing/configuration/${created._id}`, profile({ hubId: hubB, vehicleIds: [] })))).toEqual({
        status: 404,
        failedCode: "sys-404",
      });
      expect(refusal(await restricted.delete(`/routing/configuration/${created._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect((await api.get(`/routing/configuration/${created._id}`)).body.data).toEqual(created);
      expect((await restricted.get("/routing/configurations")).body.data).toEqual([]);
    });
  });

  describe("tenancy", () => {
    it("another organization cannot read, list, replace, patch or delete the profile", async () => {
      const owner = await tenantWithHubs();
      const other = await tenantWithHubs();
      const profile = await createProfile(owner.api, owner.profile());
      expect(refusal(await other.api.get(`/routing/configuration/${profile._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await other.api.put(`/routing/configuration/${profile._id}`, other.profile()))).toEqual({
        status: 404,
        failedCode: "sys-404",
      });
      expect(refusal(await other.api.patch(`/routing/configuration/${profile._id}`, { name: "stolen" }))).toEqual({
        status: 404,
        failedCode: "sys-404",
      });
      expect(refusal(await other.api.delete(`/routing/configuration/${profile._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect((await other.api.get("/routing/configurations")).body.data).toEqual([]);
      expect((await owner.api.get(`/routing/configuration/${profile._id}`)).body.data).toEqual(profile);
      expect(await findConfiguration(other.organizationId, profile._id)).toBeUndefined();
    });
  });

  describe("PUT /routing/configuration/{configurationId}", () => {
    it("replaces every field (omitted ones take their defaults) and can move the profile to another hub", async () => {
      const { api, hubA, hubB, vehicleB, profile } = await tenantWithHubs();
      const created = await createProfile(api, profile());
      const response = await api.put(`/routing/configuration/${created._id}`, { name: "Evening", hubId: hubB, vehicleIds: [vehicleB] });
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({
        _id: created._id,
        name: "Evening",
        hubId: hubB,
        vehicleIds: [vehicleB],
        returnToHub: true,
        roadFactor: 1.3,
        createdTime: created.createdTime,
      });
      expect((await api.get(`/routing/configuration/${created._id}`)).body.data).toEqual(response.body.data);
      // The reference moved with it.
      await expectRefused(
        api,
        { method: "DELETE", path: `/hub/${hubB}` },
        { status: 409, failedCode: "hub-409", unchanged: `/hub/${hubB}` },
      );
      expect((await api.delete(`/hub/${hubA}`)).body.message).toBe(
        "The hub is still used by 1 vehicle; move or delete them before deleting the hub.",
      );
    });

    it.each(invalidBodies)("rejects %s and leaves the stored profile unchanged", async (_case, overrides, field) => {
      const { api, profile } = await tenantWithHubs();
      const created = await createProfile(api, profile());
      const response = await api.put(`/routing/configuration/${created._id}`, profile(overrides));
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(response)).toContain(field);
      expect((await api.get(`/routing/configuration/${created._id}`)).body.data).toEqual(created);
    });
  });

  describe("PATCH /routing/configuration/{configurationId}", () => {
    it("changes only the fields sent", async () => {
      const { api, profile } = await tenantWithHubs();
      const created = await createProfile(api, profile());
      const response = await api.patch(`/routing/configuration/${created._id}`, { timeLimitSeconds: 5, vehicleIds: [] });
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual({ ...created, timeLimitSeconds: 5, vehicleIds: [], updatedTime: expect.any(String) });
    });

    it("changes the live-day settings scheduled runs follow, and reads them back", async () => {
      const { api, profile } = await tenantWithHubs();
      const created = await createProfile(api, profile());
      const changes = { liveDayAssigned: "free", liveDayUseIdleVehicles: false };
      const response = await api.patch(`/routing/configuration/${created._id}`, changes);
      expect(response.status).toBe(200);
      expect((await api.get(`/routing/configuration/${created._id}`)).body.data).toEqual({
        ...created,
        ...changes,
        updatedTime: expect.any(String),
      });
    });

    it("re-checks the listed vehicles against a new hub: a hub change alone keeps vehicles of the old hub and is refused", async () => {
      const { api, hubB, vehicleB, profile } = await tenantWithHubs();
      const created = await createProfile(api, profile());
      const refused = await api.patch(`/routing/configuration/${created._id}`, { hubId: hubB });
      expect(refusal(refused)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(refused)).toEqual(["vehicleIds.0"]);
      expect((await api.get(`/routing/configuration/${created._id}`)).body.data).toEqual(created);
      const moved = await api.patch(`/routing/configuration/${created._id}`, { hubId: hubB, vehicleIds: [vehicleB] });
      expect(moved.status).toBe(200);
      expect(moved.body.data).toMatchObject({ hubId: hubB, vehicleIds: [vehicleB] });
    });

    it("refuses an edit while a listed vehicle has left the hub since", async () => {
      const { api, hubB, vehicleA, profile } = await tenantWithHubs();
      const created = await createProfile(api, profile());
      expect((await api.patch(`/vehicle/${vehicleA}`, { hubId: hubB })).status).toBe(200);
      const response = await api.patch(`/routing/configuration/${created._id}`, { name: "Renamed" });
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(response)).toEqual(["vehicleIds.0"]);
      expect((await api.get(`/routing/configuration/${created._id}`)).body.data).toEqual(created);
    });

    it.each(invalidBodies.filter(([, overrides]) => !Object.values(overrides).includes(undefined)))(
      "rejects %s and leaves the stored profile unchanged",
      async (_case, overrides, field) => {
        const { api, profile } = await tenantWithHubs();
        const created = await createProfile(api, profile());
        const response = await api.patch(`/routing/configuration/${created._id}`, overrides);
        expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
        expect(fields(response)).toContain(field);
        expect((await api.get(`/routing/configuration/${created._id}`)).body.data).toEqual(created);
      },
    );

    it("rejects an empty patch", async () => {
      const { api, profile } = await tenantWithHubs();
      const created = await createProfile(api, profile());
      await expectRefused(
        api,
        { method: "PATCH", path: `/routing/configuration/${created._id}`, body: {} },
        { status: 400, failedCode: "sys-400", unchanged: `/routing/configuration/${created._id}` },
      );
    });
  });

  describe("DELETE /routing/configuration/{configurationId}", () => {
    it("deletes the profile; a second delete is 404", async () => {
      const { api, organizationId, profile } = await tenantWithHubs();
      const created = await createProfile(api, profile());
      const response = await api.delete(`/routing/configuration/${created._id}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: true, message: "Configuration profile has been deleted successfully." });
      expect(refusal(await api.get(`/routing/configuration/${created._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      await expectRefused(api, { method: "DELETE", path: `/routing/configuration/${created._id}` }, { status: 404, failedCode: "sys-404" });
      expect(await findConfiguration(organizationId, created._id)).toBeUndefined();
    });

    it("answers 409 while a routing schedule still names the profile; after the schedule is deleted it can be deleted", async () => {
      const { api, organizationId, profile } = await tenantWithHubs();
      const created = await createProfile(api, profile());
      const schedule = await api.post("/routing/schedule", scheduleBody({ configurationId: created._id }));
      expect(schedule.status).toBe(201);

      const refused = await expectRefused(
        api,
        { method: "DELETE", path: `/routing/configuration/${created._id}` },
        { status: 409, failedCode: "configuration-409", unchanged: `/routing/configuration/${created._id}` },
      );
      expect(refused.body.message).toBe(
        `The configuration profile ${created._id} is still used by a routing schedule; point the schedules at another profile or delete them before deleting the profile.`,
      );
      expect(await findConfiguration(organizationId, created._id)).toBeDefined();

      expect((await api.delete(`/routing/schedule/${schedule.body.data._id}`)).status).toBe(200);
      expect((await api.delete(`/routing/configuration/${created._id}`)).status).toBe(200);
    });
  });

  describe("GET /routing/configurations", () => {
    it("pages through all profiles oldest first, and filters by hub", async () => {
      const { api, hubA, hubB, profile } = await tenantWithHubs();
      const created: Array<{ _id: string; hubId: string }> = [];
      for (let i = 0; i < 5; i++)
        created.push(await createProfile(api, profile({ name: `P${i}`, hubId: i % 2 ? hubB : hubA, vehicleIds: [] })));
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const response = await api.get(`/routing/configurations?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
        expect(response.status).toBe(200);
        expect(response.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...ids(response));
        cursor = response.body.nextCursor;
      } while (cursor);
      // Ids order by their creation second, and within one second at random (docs/api/README.md).
      expect(seen).toEqual(created.map((p) => p._id).sort());
      expect(ids(await api.get(`/routing/configurations?hubId=${hubB}`))).toEqual(
        created
          .filter((p) => p.hubId === hubB)
          .map((p) => p._id)
          .sort(),
      );
    });

    it("lists only the token's hubs when it is restricted", async () => {
      const { api, organizationId, hubA, hubB, profile } = await tenantWithHubs();
      const a = await createProfile(api, profile());
      await createProfile(api, profile({ hubId: hubB, vehicleIds: [] }));
      const restricted = apiClient(tokenFor({ organizationId, hubIds: [hubA] }));
      expect(ids(await restricted.get("/routing/configurations"))).toEqual([a._id]);
      expect(refusal(await restricted.get(`/routing/configurations?hubId=${hubB}`))).toEqual({ status: 400, failedCode: "sys-400" });
    });

    it.each([
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["cursor=garbage", "cursor"],
      ["vehicleId=x", "vehicleId"],
    ])("rejects the query %s with 400", async (query, field) => {
      const response = await newTenant().api.get(`/routing/configurations?${query}`);
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(response)).toContain(field);
    });
  });

  describe("for routing schedules and runs", () => {
    it("findConfiguration reads the profile as stored; configurationIdsOfHub lists a hub's profiles oldest first", async () => {
      const { api, organizationId, hubA, hubB, profile } = await tenantWithHubs();
      const first = await createProfile(api, profile());
      const second = await createProfile(api, profile({ name: "Second" }));
      const elsewhere = await createProfile(api, profile({ hubId: hubB, vehicleIds: [] }));
      expect(await findConfiguration(organizationId, first._id)).toEqual(first);
      expect(await findConfiguration(organizationId, "0123456789abcdef01234567")).toBeUndefined();
      expect(await hubConfigurations.configurationIdsOfHub(organizationId, hubA)).toEqual([first._id, second._id].sort());
      expect(await hubConfigurations.configurationIdsOfHub(organizationId, hubB)).toEqual([elsewhere._id]);
    });
  });
});
