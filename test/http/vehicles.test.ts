import { describe, expect, it } from "vitest";
import { type ApiClient, apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { expectRefused, refusal } from "#test/support/refusals";

/** A vehicle must name an existing hub of its organization: every tenant here starts with two hubs. */
async function createHub(api: ApiClient, name: string): Promise<string> {
  const response = await api.post("/hub", { name, address: `${name} street 1`, lat: -6.2, lng: 106.8 });
  expect(response.status).toBe(201);
  return response.body.data._id;
}

async function tenantWithHubs() {
  const tenant = newTenant();
  const hubA = await createHub(tenant.api, "A");
  const hubB = await createHub(tenant.api, "B");
  return { ...tenant, hubA, hubB, vehicle: (overrides: Record<string, unknown> = {}) => ({ ...validVehicle, hubId: hubA, ...overrides }) };
}

const validVehicle = {
  name: "Van 1",
  type: "truck",
  plateNumber: "B 1234 XY",
  assignee: "driver-7",
  capacity: { weight: { min: 10, max: 500 }, volume: { max: 12 } },
  speed: 40,
  workingTime: { startTime: "07:00", endTime: "16:00", multiday: 0 },
  breakTime: { startTime: "12:00", endTime: "12:30" },
  tags: ["cold", "fragile"],
  fixedCost: 10,
  constraints: { maxVisits: 30, maxDistanceKm: 250, maxDurationMinutes: 540 },
};

async function createVehicle(api: ApiClient, body: Record<string, unknown>) {
  const response = await api.post("/vehicle", body);
  expect(response.status).toBe(201);
  return response.body.data;
}

/** Each case: one invalid field → 400 naming it. */
const invalidBodies: Array<[string, Record<string, unknown>, string]> = [
  ["missing name", { name: undefined }, "name"],
  ["blank name", { name: "   " }, "name"],
  ["missing hubId", { hubId: undefined }, "hubId"],
  ["unknown type", { type: "plane" }, "type"],
  ["speed below 5", { speed: 4 }, "speed"],
  ["speed above 200", { speed: 201 }, "speed"],
  ["negative capacity", { capacity: { weight: { max: -1 } } }, "capacity.weight.max"],
  ["capacity min above max", { capacity: { weight: { min: 10, max: 5 } } }, "capacity.weight.min"],
  ["unknown capacity dimension", { capacity: { height: { max: 1 } } }, "capacity.height"],
  ["working time not HH:mm", { workingTime: { startTime: "7am", endTime: "16:00" } }, "workingTime.startTime"],
  ["working time ends before it starts", { workingTime: { startTime: "16:00", endTime: "07:00", multiday: 0 } }, "workingTime.endTime"],
  ["multiday above 7", { workingTime: { startTime: "07:00", endTime: "16:00", multiday: 8 } }, "workingTime.multiday"],
  ["break outside working time", { breakTime: { startTime: "17:00", endTime: "17:30" } }, "breakTime"],
  ["break ends before it starts", { breakTime: { startTime: "12:30", endTime: "12:30" } }, "breakTime.endTime"],
  ["more than 10 tags", { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }, "tags"],
  ["duplicate tags", { tags: ["a", "a"] }, "tags"],
  ["fixedCost above 100", { fixedCost: 101 }, "fixedCost"],
  ["non-positive maxVisits", { constraints: { maxVisits: 0 } }, "constraints.maxVisits"],
  ["fractional maxVisits", { constraints: { maxVisits: 1.5 } }, "constraints.maxVisits"],
  ["plateNumber over 20 characters", { plateNumber: "B".repeat(21) }, "plateNumber"],
  ["assignee over 128 characters (a token subject's most)", { assignee: "u".repeat(129) }, "assignee"],
  ["negative volume", { capacity: { volume: { max: -1 } } }, "capacity.volume.max"],
  ["volume min above max", { capacity: { volume: { min: 3, max: 2 } } }, "capacity.volume.min"],
  ["break time not HH:mm", { breakTime: { startTime: "noon", endTime: "12:30" } }, "breakTime.startTime"],
  ["negative multiday", { workingTime: { startTime: "07:00", endTime: "16:00", multiday: -1 } }, "workingTime.multiday"],
  ["blank tag", { tags: ["  "] }, "tags.0"],
  ["fixedCost below 0", { fixedCost: -1 }, "fixedCost"],
  ["non-positive maxDistanceKm", { constraints: { maxDistanceKm: 0 } }, "constraints.maxDistanceKm"],
  ["non-positive maxDurationMinutes", { constraints: { maxDurationMinutes: -5 } }, "constraints.maxDurationMinutes"],
  ["capacity the store cannot keep", { capacity: { weight: { max: 1e16 } } }, "capacity.weight.max"],
  ["maxDistanceKm too small for the store", { constraints: { maxDistanceKm: 1e-200 } }, "constraints.maxDistanceKm"],
  ["unknown field", { color: "red" }, "color"],
];

describe("Vehicles API", () => {
  describe("POST /vehicle", () => {
    it("creates a vehicle with defaults for omitted optional fields", async () => {
      const { api, organizationId, hubA } = await tenantWithHubs();
      const response = await api.post("/vehicle", { name: "Bike", hubId: hubA });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ status: true, message: "Vehicle has been added successfully." });
      const vehicle = response.body.data;
      expect(vehicle._id).toMatch(/^[0-9a-f]{24}$/);
      expect(vehicle).toMatchObject({
        name: "Bike",
        hubId: hubA,
        type: "car",
        speed: 25,
        workingTime: { startTime: "08:00", endTime: "17:00", multiday: 0 },
        breakTime: null,
        tags: [],
        fixedCost: 0,
        organizationId,
      });
      expect(vehicle.createdTime).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      expect(vehicle).not.toHaveProperty("PK");
      expect(vehicle).not.toHaveProperty("version");
    });

    it("accepts a night shift spanning midnight with multiday", async () => {
      const { api, vehicle: body } = await tenantWithHubs();
      const vehicle = await createVehicle(
        api,
        body({
          workingTime: { startTime: "22:00", endTime: "06:00", multiday: 1 },
          breakTime: { startTime: "02:00", endTime: "02:30" },
        }),
      );
      expect(vehicle.workingTime).toEqual({ startTime: "22:00", endTime: "06:00", multiday: 1 });
    });

    it.each(invalidBodies)("rejects %s with 400 naming the field, storing nothing", async (_case, overrides, field) => {
      const { api, vehicle } = await tenantWithHubs();
      const response = await api.post("/vehicle", vehicle(overrides));
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.message).toBe("Bad request - invalid parameters provided.");
      expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect((await api.get("/vehicles")).body.data).toEqual([]);
    });

    it("rejects a hub the token does not allow", async () => {
      const { api, organizationId, hubB, vehicle } = await tenantWithHubs();
      const restricted = apiClient(tokenFor({ organizationId, hubIds: [hubB] }));
      const response = await restricted.post("/vehicle", vehicle());
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors[0].field).toBe("hubId");
      expect((await api.get("/vehicles")).body.data).toEqual([]);
    });

    it.each([
      ["an id no hub has", "0123456789abcdef01234567"],
      ["free text", "hub-a"],
    ])("rejects a hubId that is %s with 400 naming hubId, storing nothing", async (_case, hubId) => {
      const { api, vehicle } = await tenantWithHubs();
      const response = await api.post("/vehicle", vehicle({ hubId }));
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors).toEqual([{ field: "hubId", message: "hubId must name an existing hub of your organization" }]);
      expect((await api.get("/vehicles")).body.data).toEqual([]);
    });

    it("rejects a hub that was deleted", async () => {
      const { api, hubB, vehicle } = await tenantWithHubs();
      expect((await api.delete(`/hub/${hubB}`)).status).toBe(200);
      const response = await api.post("/vehicle", vehicle({ hubId: hubB }));
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors[0].field).toBe("hubId");
      expect((await api.get("/vehicles")).body.data).toEqual([]);
    });
  });

  describe("GET /vehicle/{vehicleId}", () => {
    it("reads a vehicle of the caller's organization", async () => {
      const { api, vehicle } = await tenantWithHubs();
      const created = await createVehicle(api, vehicle());
      const response = await api.get(`/vehicle/${created._id}`);
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual(created);
    });

    it("answers 404 for an unknown id", async () => {
      const { api } = newTenant();
      const response = await api.get("/vehicle/0123456789abcdef01234567");
      expect(refusal(response)).toEqual({ status: 404, failedCode: "sys-404" });
      expect(response.body).toMatchObject({ status: false, message: "Data not found" });
    });

    it("hides vehicles of hubs the token does not allow", async () => {
      const { api, organizationId, hubB, vehicle } = await tenantWithHubs();
      const created = await createVehicle(api, vehicle());
      const restricted = apiClient(tokenFor({ organizationId, hubIds: [hubB] }));
      expect(refusal(await restricted.get(`/vehicle/${created._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
    });
  });

  describe("tenancy", () => {
    it("another organization cannot read, list, replace, patch or delete the vehicle", async () => {
      const owner = await tenantWithHubs();
      const other = await tenantWithHubs();
      const vehicle = await createVehicle(owner.api, owner.vehicle());
      expect(refusal(await other.api.get(`/vehicle/${vehicle._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await other.api.put(`/vehicle/${vehicle._id}`, other.vehicle()))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await other.api.patch(`/vehicle/${vehicle._id}`, { name: "stolen" }))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await other.api.delete(`/vehicle/${vehicle._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect((await other.api.get("/vehicles")).body.data).toEqual([]);
      expect((await owner.api.get(`/vehicle/${vehicle._id}`)).body.data).toEqual(vehicle);
    });

    it("rejects another organization's cursor", async () => {
      const owner = await tenantWithHubs();
      for (let i = 0; i < 3; i++) await createVehicle(owner.api, owner.vehicle({ name: `V${i}` }));
      const firstPage = await owner.api.get("/vehicles?limit=1");
      expect(firstPage.body.nextCursor).toEqual(expect.any(String));
      const other = newTenant();
      const response = await other.api.get(`/vehicles?limit=1&cursor=${firstPage.body.nextCursor}`);
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors[0].field).toBe("cursor");
    });
  });

  describe("PUT /vehicle/{vehicleId}", () => {
    it("moves the vehicle to another hub of the organization", async () => {
      const { api, hubB, vehicle } = await tenantWithHubs();
      const created = await createVehicle(api, vehicle());
      const response = await api.put(`/vehicle/${created._id}`, vehicle({ hubId: hubB }));
      expect(response.status).toBe(200);
      expect((await api.get(`/vehicle/${created._id}`)).body.data.hubId).toBe(hubB);
    });

    it("rejects a hub that does not exist and leaves the stored vehicle unchanged", async () => {
      const { api, vehicle } = await tenantWithHubs();
      const created = await createVehicle(api, vehicle());
      const response = await api.put(`/vehicle/${created._id}`, vehicle({ hubId: "0123456789abcdef01234567" }));
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors[0].field).toBe("hubId");
      expect((await api.get(`/vehicle/${created._id}`)).body.data).toEqual(created);
    });

    it("replaces every field, keeping id and creation time", async () => {
      const { api, hubA, vehicle } = await tenantWithHubs();
      const created = await createVehicle(api, vehicle());
      const response = await api.put(`/vehicle/${created._id}`, { name: "Renamed", hubId: hubA });
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({
        _id: created._id,
        name: "Renamed",
        tags: [],
        speed: 25,
        createdTime: created.createdTime,
      });
      expect((await api.get(`/vehicle/${created._id}`)).body.data.name).toBe("Renamed");
    });

    it.each(invalidBodies)("rejects %s and leaves the stored vehicle unchanged", async (_case, overrides, field) => {
      const { api, vehicle } = await tenantWithHubs();
      const created = await createVehicle(api, vehicle());
      const response = await api.put(`/vehicle/${created._id}`, vehicle(overrides));
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect((await api.get(`/vehicle/${created._id}`)).body.data).toEqual(created);
    });
  });

  describe("PATCH /vehicle/{vehicleId}", () => {
    it("changes only the fields sent", async () => {
      const { api, vehicle } = await tenantWithHubs();
      const created = await createVehicle(api, vehicle());
      const response = await api.patch(`/vehicle/${created._id}`, { speed: 60, tags: ["ev"], plateNumber: null });
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({ ...created, speed: 60, tags: ["ev"], plateNumber: null, updatedTime: expect.any(String) });
    });

    it("validates the merged vehicle: a break that no longer fits the new working time is rejected", async () => {
      const { api, vehicle } = await tenantWithHubs();
      const created = await createVehicle(api, vehicle());
      const response = await api.patch(`/vehicle/${created._id}`, { workingTime: { startTime: "13:00", endTime: "18:00" } });
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors[0].field).toBe("breakTime");
      expect((await api.get(`/vehicle/${created._id}`)).body.data).toEqual(created);
    });

    it.each(invalidBodies.filter(([, overrides]) => !Object.values(overrides).includes(undefined)))(
      "rejects %s and leaves the stored vehicle unchanged",
      async (_case, overrides, field) => {
        const { api, vehicle } = await tenantWithHubs();
        const created = await createVehicle(api, vehicle());
        const response = await api.patch(`/vehicle/${created._id}`, overrides);
        expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
        expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
        expect((await api.get(`/vehicle/${created._id}`)).body.data).toEqual(created);
      },
    );

    it("rejects an empty patch", async () => {
      const { api, vehicle } = await tenantWithHubs();
      const created = await createVehicle(api, vehicle());
      await expectRefused(
        api,
        { method: "PATCH", path: `/vehicle/${created._id}`, body: {} },
        { status: 400, failedCode: "sys-400", unchanged: `/vehicle/${created._id}` },
      );
    });
  });

  describe("DELETE /vehicle/{vehicleId}", () => {
    it("deletes the vehicle; a second delete is 404", async () => {
      const { api, vehicle } = await tenantWithHubs();
      const created = await createVehicle(api, vehicle());
      const response = await api.delete(`/vehicle/${created._id}`);
      expect(response.status).toBe(200);
      expect(response.body.status).toBe(true);
      expect(refusal(await api.get(`/vehicle/${created._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      await expectRefused(api, { method: "DELETE", path: `/vehicle/${created._id}` }, { status: 404, failedCode: "sys-404" });
    });
  });

  describe("GET /vehicles", () => {
    it("pages through all vehicles with an opaque cursor", async () => {
      const { api, vehicle } = await tenantWithHubs();
      const ids = new Set<string>();
      for (let i = 0; i < 5; i++) ids.add((await createVehicle(api, vehicle({ name: `V${i}` })))._id);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const response = await api.get(`/vehicles?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
        expect(response.status).toBe(200);
        expect(response.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...response.body.data.map((v: { _id: string }) => v._id));
        cursor = response.body.nextCursor;
      } while (cursor);
      expect(new Set(seen)).toEqual(ids);
    });

    it("filters by hub and by tag", async () => {
      const { api, hubA, hubB, vehicle } = await tenantWithHubs();
      const a = await createVehicle(api, vehicle({ hubId: hubA, tags: ["cold"] }));
      const b = await createVehicle(api, vehicle({ hubId: hubB, tags: ["cold", "xl"] }));
      await createVehicle(api, vehicle({ hubId: hubB, tags: [] }));
      expect((await api.get(`/vehicles?hubId=${hubA}`)).body.data.map((v: { _id: string }) => v._id)).toEqual([a._id]);
      expect((await api.get(`/vehicles?hubId=${hubB}&tag=cold`)).body.data.map((v: { _id: string }) => v._id)).toEqual([b._id]);
      expect((await api.get("/vehicles?tag=cold")).body.data.map((v: { _id: string }) => v._id).sort()).toEqual([a._id, b._id].sort());
    });

    it("lists only the token's hubs when it is restricted", async () => {
      const { api, organizationId, hubA, hubB, vehicle } = await tenantWithHubs();
      const a = await createVehicle(api, vehicle({ hubId: hubA }));
      await createVehicle(api, vehicle({ hubId: hubB }));
      const restricted = apiClient(tokenFor({ organizationId, hubIds: [hubA] }));
      expect((await restricted.get("/vehicles")).body.data.map((v: { _id: string }) => v._id)).toEqual([a._id]);
    });

    it.each([
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=abc", "limit"],
      ["cursor=garbage", "cursor"],
      ["color=red", "color"],
    ])("rejects the query %s with 400", async (query, field) => {
      const { api } = newTenant();
      const response = await api.get(`/vehicles?${query}`);
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });
  });
});
