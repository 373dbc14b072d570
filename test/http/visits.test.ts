import { describe, expect, it } from "vitest";
import { markVisitDispatched, oldestActiveVisits } from "#shared/app/visits";
import { type ApiClient, apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { expectRefused, refusal } from "#test/support/refusals";

async function createHub(api: ApiClient, name: string): Promise<string> {
  const response = await api.post("/hub", { name, address: `${name} street 1`, lat: -6.2, lng: 106.8 });
  expect(response.status).toBe(201);
  return response.body.data._id;
}

/** Visits must name an existing hub of the organization: every tenant here starts with two hubs. */
async function tenantWithHubs() {
  const tenant = newTenant();
  const hubA = await createHub(tenant.api, "A");
  const hubB = await createHub(tenant.api, "B");
  return { ...tenant, hubA, hubB, visit: (overrides: Record<string, unknown> = {}) => ({ ...validVisit, hubId: hubA, ...overrides }) };
}

const validVisit = {
  name: "Toko Makmur",
  address: "Jl. Thamrin 10",
  coordinate: { lat: -6.19, lng: 106.82 },
  timeWindows: [
    { startTime: "09:00", endTime: "12:00" },
    { startTime: "2026-12-01 14:00", endTime: "2026-12-01 16:30" },
  ],
  visitTime: 15,
  capacity: { weight: 12.5, volume: 0.4 },
  tags: ["cold"],
};

async function createVisit(api: ApiClient, body: Record<string, unknown>) {
  const response = await api.post("/visit", body);
  expect(response.status).toBe(201);
  return response.body.data;
}

const fields = (response: { body: { errors?: Array<{ field: string }> } }) => (response.body.errors ?? []).map((e) => e.field);
const ids = (response: { body: { data: Array<{ _id: string }> } }) => response.body.data.map((visit) => visit._id);

/** Each case: one invalid field → 400 naming it. */
const invalidBodies: Array<[string, Record<string, unknown>, string]> = [
  ["missing name", { name: undefined }, "name"],
  ["blank name", { name: " " }, "name"],
  ["missing hubId", { hubId: undefined }, "hubId"],
  ["missing coordinate", { coordinate: undefined }, "coordinate"],
  ["coordinate text that is no pair", { coordinate: "somewhere" }, "coordinate"],
  ["coordinate text out of range", { coordinate: "95,10" }, "coordinate.lat"],
  ["coordinate object out of range", { coordinate: { lat: 10, lng: 200 } }, "coordinate.lng"],
  ["coordinate object missing lng", { coordinate: { lat: 10 } }, "coordinate"],
  ["time window not a time", { timeWindows: [{ startTime: "9am", endTime: "12:00" }] }, "timeWindows.0.startTime"],
  ["time window ending before it starts", { timeWindows: [{ startTime: "12:00", endTime: "09:00" }] }, "timeWindows.0.endTime"],
  ["empty time window", { timeWindows: [{ startTime: "2026-12-01 09:00", endTime: "2026-12-01 09:00" }] }, "timeWindows.0.endTime"],
  ["time window mixing forms", { timeWindows: [{ startTime: "09:00", endTime: "2026-12-01 12:00" }] }, "timeWindows.0.endTime"],
  [
    "time window on a date that does not exist",
    { timeWindows: [{ startTime: "2026-02-30 09:00", endTime: "2026-02-30 10:00" }] },
    "timeWindows.0.startTime",
  ],
  [
    "more than 10 time windows",
    { timeWindows: Array.from({ length: 11 }, () => ({ startTime: "09:00", endTime: "10:00" })) },
    "timeWindows",
  ],
  ["negative visitTime", { visitTime: -1 }, "visitTime"],
  ["negative weight", { capacity: { weight: -1 } }, "capacity.weight"],
  ["weight the store cannot keep", { capacity: { weight: 1e20 } }, "capacity.weight"],
  ["volume too small for the store", { capacity: { volume: 1e-200 } }, "capacity.volume"],
  ["unknown capacity dimension", { capacity: { height: 1 } }, "capacity.height"],
  ["more than 10 tags", { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }, "tags"],
  ["duplicate tags", { tags: ["a", "a"] }, "tags"],
  ["unknown status", { status: "LOST" }, "status"],
  ["status ASSIGNED", { status: "ASSIGNED" }, "status"],
  ["unknown field", { urgency: 1 }, "urgency"],
];

/** Ids order by their creation second, and within one second at random (docs/api/README.md): the order lists answer. */
const oldestFirst = (...created: string[]) => [...created].sort();

describe("Visits API", () => {
  describe("POST /visit", () => {
    it("creates a visit with defaults for omitted optional fields", async () => {
      const { api, organizationId, hubA } = await tenantWithHubs();
      const response = await api.post("/visit", { hubId: hubA, name: "Stop", coordinate: { lat: 1.5, lng: 2.5 } });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ status: true, message: "Visit has been added successfully." });
      const visit = response.body.data;
      expect(visit).toEqual({
        _id: expect.stringMatching(/^[0-9a-f]{24}$/),
        hubId: hubA,
        name: "Stop",
        address: null,
        coordinate: { lat: 1.5, lng: 2.5 },
        timeWindows: [],
        visitTime: null,
        capacity: {},
        tags: [],
        status: "UNASSIGNED",
        priority: 3,
        pickupVisitId: null,
        assignedVehicleId: null,
        routingResultId: null,
        routePlannedOrder: null,
        eta: null,
        etd: null,
        attempts: 0,
        failureReason: null,
        lastTransition: null,
        requirements: { photo: false, signature: false, notes: false },
        proofs: [],
        organizationId,
        createdTime: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
        updatedTime: visit.createdTime,
      });
      expect((await api.get(`/visit/${visit._id}`)).body.data).toEqual(visit);
    });

    it("keeps every field sent, time windows of both forms included", async () => {
      const { api, visit } = await tenantWithHubs();
      const created = await createVisit(api, visit({ status: "ONGOING" }));
      expect(created).toMatchObject({ ...visit(), status: "ONGOING" });
    });

    it.each([
      ["-6.2,106.8", { lat: -6.2, lng: 106.8 }],
      [" -6.2 , 106.8 ", { lat: -6.2, lng: 106.8 }],
      ["+45,-120.5", { lat: 45, lng: -120.5 }],
    ])("accepts the coordinate text %j and stores it as { lat, lng }", async (text, coordinate) => {
      const { api, visit } = await tenantWithHubs();
      const created = await createVisit(api, visit({ coordinate: text }));
      expect(created.coordinate).toEqual(coordinate);
      expect((await api.get(`/visit/${created._id}`)).body.data.coordinate).toEqual(coordinate);
    });

    it.each(invalidBodies)("rejects %s with 400 naming the field, storing nothing", async (_case, overrides, field) => {
      const { api, visit } = await tenantWithHubs();
      const response = await api.post("/visit", visit(overrides));
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.message).toBe("Bad request - invalid parameters provided.");
      expect(fields(response)).toContain(field);
      expect((await api.get("/visits")).body.data).toEqual([]);
    });

    // eta is a dispatch field (server-set, ignored when sent): visitTime is the third bad field here.
    it.each(["NOPE", "ASSIGNED"])("lists every bad field in one answer, as sentences: lat, status %s and visitTime", async (status) => {
      const { api, visit } = await tenantWithHubs();
      const response = await api.post(
        "/visit",
        visit({ coordinate: { lat: "north", lng: 106.8 }, status, visitTime: "long", name: undefined }),
      );
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(response).sort()).toEqual(["coordinate", "name", "status", "visitTime"]);
      for (const error of response.body.errors as Array<{ field: string; message: string }>) {
        expect(error.message.startsWith(error.field), error.message).toBe(true);
        expect(error.message).toMatch(/\.$/);
        expect(error.message).not.toMatch(/Invalid input|expected|received/i);
      }
      expect(response.body.errors).toContainEqual({ field: "name", message: "name is required." });
      expect((await api.get("/visits")).body.data).toEqual([]);
    });

    it("names bad path, query and body fields in one answer", async () => {
      const { api } = await tenantWithHubs();
      const response = await api.patch(`/visit/${"x".repeat(300)}`, { visitTime: "soon" });
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(response).sort()).toEqual(["visitId", "visitTime"]);
    });

    it("rejects a hub that does not exist in the organization, storing nothing", async () => {
      const { api, visit } = await tenantWithHubs();
      const response = await api.post("/visit", visit({ hubId: "0123456789abcdef01234567" }));
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(response.body.errors).toEqual([{ field: "hubId", message: "hubId must name an existing hub of your organization" }]);
      expect((await api.get("/visits")).body.data).toEqual([]);
    });

    it("rejects a hub the token does not allow", async () => {
      const { api, organizationId, hubB, visit } = await tenantWithHubs();
      const restricted = apiClient(tokenFor({ organizationId, hubIds: [hubB] }));
      const response = await restricted.post("/visit", visit());
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(response)).toEqual(["hubId"]);
      expect((await api.get("/visits")).body.data).toEqual([]);
    });
  });

  describe("GET /visit/{visitId}", () => {
    it("answers 404 for an unknown id", async () => {
      const { api } = await tenantWithHubs();
      const response = await api.get("/visit/0123456789abcdef01234567");
      expect(refusal(response)).toEqual({ status: 404, failedCode: "sys-404" });
      expect(response.body).toMatchObject({ status: false, message: "Data not found" });
    });

    it("hides visits of hubs the token does not allow", async () => {
      const { api, organizationId, hubB, visit } = await tenantWithHubs();
      const created = await createVisit(api, visit());
      const restricted = apiClient(tokenFor({ organizationId, hubIds: [hubB] }));
      expect(refusal(await restricted.get(`/visit/${created._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await restricted.patch(`/visit/${created._id}`, { name: "x" }))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await restricted.delete(`/visit/${created._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect((await api.get(`/visit/${created._id}`)).body.data).toEqual(created);
      expect((await restricted.get("/visits")).body.data).toEqual([]);
    });
  });

  describe("tenancy", () => {
    it("another organization cannot read, list, patch or delete the visit", async () => {
      const owner = await tenantWithHubs();
      const other = await tenantWithHubs();
      const visit = await createVisit(owner.api, owner.visit());
      expect(refusal(await other.api.get(`/visit/${visit._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await other.api.patch(`/visit/${visit._id}`, { name: "stolen" }))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await other.api.delete(`/visit/${visit._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect((await other.api.get("/visits")).body.data).toEqual([]);
      expect((await other.api.get(`/visits?hubId=${owner.hubA}`)).body.data).toEqual([]);
      expect((await owner.api.get(`/visit/${visit._id}`)).body.data).toEqual(visit);
    });
  });

  describe("PATCH /visit/{visitId}", () => {
    it("changes only the fields sent", async () => {
      const { api, visit } = await tenantWithHubs();
      const created = await createVisit(api, visit());
      const response = await api.patch(`/visit/${created._id}`, { coordinate: "1,2", tags: [], address: null });
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual({
        ...created,
        coordinate: { lat: 1, lng: 2 },
        tags: [],
        address: null,
        updatedTime: expect.any(String),
      });
      expect((await api.get(`/visit/${created._id}`)).body.data).toEqual(response.body.data);
    });

    it("moves the visit to another hub: read by id, listed under the new hub, the old hub deletable", async () => {
      const { api, hubA, hubB, visit } = await tenantWithHubs();
      const created = await createVisit(api, visit());
      const response = await api.patch(`/visit/${created._id}`, { hubId: hubB });
      expect(response.status).toBe(200);
      expect((await api.get(`/visit/${created._id}`)).body.data).toEqual(response.body.data);
      expect(ids(await api.get(`/visits?hubId=${hubB}`))).toEqual([created._id]);
      expect(ids(await api.get(`/visits?hubId=${hubB}&status=UNASSIGNED`))).toEqual([created._id]);
      expect((await api.get(`/visits?hubId=${hubA}`)).body.data).toEqual([]);
      await expectRefused(
        api,
        { method: "DELETE", path: `/hub/${hubB}` },
        { status: 409, failedCode: "hub-409", unchanged: `/hub/${hubB}` },
      );
      expect((await api.delete(`/hub/${hubA}`)).status).toBe(200);
    });

    it("rejects a move to a hub that does not exist and changes nothing", async () => {
      const { api, hubA, visit } = await tenantWithHubs();
      const created = await createVisit(api, visit());
      const response = await api.patch(`/visit/${created._id}`, { hubId: "0123456789abcdef01234567" });
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(response)).toEqual(["hubId"]);
      expect((await api.get(`/visit/${created._id}`)).body.data).toEqual(created);
      expect(ids(await api.get(`/visits?hubId=${hubA}`))).toEqual([created._id]);
    });

    it.each(invalidBodies.filter(([, overrides]) => !Object.values(overrides).includes(undefined)))(
      "rejects %s and leaves the stored visit unchanged",
      async (_case, overrides, field) => {
        const { api, visit } = await tenantWithHubs();
        const created = await createVisit(api, visit());
        const response = await api.patch(`/visit/${created._id}`, overrides);
        expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
        expect(fields(response)).toContain(field);
        expect((await api.get(`/visit/${created._id}`)).body.data).toEqual(created);
      },
    );

    it("rejects an empty patch", async () => {
      const { api, visit } = await tenantWithHubs();
      const created = await createVisit(api, visit());
      await expectRefused(
        api,
        { method: "PATCH", path: `/visit/${created._id}`, body: {} },
        { status: 400, failedCode: "sys-400", unchanged: `/visit/${created._id}` },
      );
    });

    it("answers 404 for an unknown visit", async () => {
      const { api } = await tenantWithHubs();
      await expectRefused(
        api,
        { method: "PATCH", path: "/visit/0123456789abcdef01234567", body: { name: "x" } },
        { status: 404, failedCode: "sys-404" },
      );
    });
  });

  describe("DELETE /visit/{visitId}", () => {
    it("deletes the visit; a second delete is 404 and the hub is free again", async () => {
      const { api, hubA, visit } = await tenantWithHubs();
      const created = await createVisit(api, visit());
      const response = await api.delete(`/visit/${created._id}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: true, message: "Visit has been deleted successfully." });
      expect(refusal(await api.get(`/visit/${created._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      await expectRefused(api, { method: "DELETE", path: `/visit/${created._id}` }, { status: 404, failedCode: "sys-404" });
      expect((await api.get("/visits")).body.data).toEqual([]);
      expect((await api.delete(`/hub/${hubA}`)).status).toBe(200);
    });
  });

  describe("GET /visits", () => {
    it("pages through the organization's visits oldest first", async () => {
      const { api, hubA, hubB, visit } = await tenantWithHubs();
      const created: string[] = [];
      for (let i = 0; i < 5; i++) created.push((await createVisit(api, visit({ name: `V${i}`, hubId: i % 2 ? hubB : hubA })))._id);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const response = await api.get(`/visits?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
        expect(response.status).toBe(200);
        expect(response.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...ids(response));
        cursor = response.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual(oldestFirst(...created));
    });

    it("filters by hub and by status (active and inactive statuses)", async () => {
      const { api, hubA, hubB, visit } = await tenantWithHubs();
      const a1 = await createVisit(api, visit({ hubId: hubA }));
      const a2 = await createVisit(api, visit({ hubId: hubA, status: "ONGOING" }));
      const a3 = await createVisit(api, visit({ hubId: hubA, status: "DONE" }));
      const b1 = await createVisit(api, visit({ hubId: hubB }));
      expect(ids(await api.get(`/visits?hubId=${hubA}`))).toEqual(oldestFirst(a1._id, a2._id, a3._id));
      expect(ids(await api.get(`/visits?hubId=${hubA}&status=UNASSIGNED`))).toEqual([a1._id]);
      expect(ids(await api.get(`/visits?hubId=${hubA}&status=ONGOING`))).toEqual([a2._id]);
      expect(ids(await api.get(`/visits?hubId=${hubA}&status=DONE`))).toEqual([a3._id]);
      expect(ids(await api.get("/visits?status=UNASSIGNED"))).toEqual(oldestFirst(a1._id, b1._id));
      expect(ids(await api.get(`/visits?hubId=${hubB}`))).toEqual([b1._id]);
    });

    it("lists only the token's hubs when it is restricted, and refuses a hub filter outside them", async () => {
      const { api, organizationId, hubA, hubB, visit } = await tenantWithHubs();
      const a = await createVisit(api, visit({ hubId: hubA }));
      await createVisit(api, visit({ hubId: hubB }));
      const restricted = apiClient(tokenFor({ organizationId, hubIds: [hubA] }));
      expect(ids(await restricted.get("/visits"))).toEqual([a._id]);
      const refused = await restricted.get(`/visits?hubId=${hubB}`);
      expect(refusal(refused)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(refused)).toEqual(["hubId"]);
    });

    it("rejects a cursor of another list (another hub's, another organization's)", async () => {
      const { api, hubA, hubB, visit } = await tenantWithHubs();
      for (let i = 0; i < 2; i++) await createVisit(api, visit({ hubId: hubA }));
      const first = await api.get(`/visits?hubId=${hubA}&limit=1`);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const otherHub = await api.get(`/visits?hubId=${hubB}&limit=1&cursor=${first.body.nextCursor}`);
      expect(refusal(otherHub)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(otherHub)).toEqual(["cursor"]);
      const otherOrganization = await newTenant().api.get(`/visits?hubId=${hubA}&limit=1&cursor=${first.body.nextCursor}`);
      expect(refusal(otherOrganization)).toEqual({ status: 400, failedCode: "sys-400" });
    });

    it("binds a cursor to its whole filter: a status filter's cursor continues only that filter", async () => {
      const { api, hubA, visit } = await tenantWithHubs();
      for (const status of ["UNASSIGNED", "UNASSIGNED", "ONGOING", "ONGOING", "DONE", "DONE"])
        await createVisit(api, visit({ hubId: hubA, status }));
      const first = await api.get(`/visits?hubId=${hubA}&status=UNASSIGNED&limit=1`);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const same = await api.get(`/visits?hubId=${hubA}&status=UNASSIGNED&limit=1&cursor=${first.body.nextCursor}`);
      expect(same.status).toBe(200);
      expect(same.body.data).toHaveLength(1);
      // ONGOING reads the same (active-visits) partition as UNASSIGNED; DONE, the hub's; no filter, the hub's too.
      for (const other of [`hubId=${hubA}&status=ONGOING`, `hubId=${hubA}&status=DONE`, `hubId=${hubA}`, "status=UNASSIGNED"]) {
        const response = await api.get(`/visits?${other}&limit=1&cursor=${first.body.nextCursor}`);
        expect(refusal(response), other).toEqual({ status: 400, failedCode: "sys-400" });
        expect(fields(response), other).toEqual(["cursor"]);
      }
    });

    it.each([
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["status=LOST", "status"],
      ["cursor=garbage", "cursor"],
      ["tag=x", "tag"],
    ])("rejects the query %s with 400", async (query, field) => {
      const response = await newTenant().api.get(`/visits?${query}`);
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(response)).toContain(field);
    });
  });

  describe("what a routing run reads and dispatch writes", () => {
    it("oldestActiveVisits: the hub's UNASSIGNED/ONGOING visits, oldest first, at most max", async () => {
      const { api, organizationId, hubA, hubB, visit } = await tenantWithHubs();
      const active: string[] = [];
      for (let i = 0; i < 4; i++)
        active.push((await createVisit(api, visit({ name: `A${i}`, status: i === 2 ? "ONGOING" : "UNASSIGNED" })))._id);
      await createVisit(api, visit({ status: "DONE" }));
      await createVisit(api, visit({ status: "CANCELLED" }));
      await createVisit(api, visit({ hubId: hubB }));
      const done = await createVisit(api, visit());
      expect((await api.patch(`/visit/${done._id}`, { status: "FAILED" })).status).toBe(200);

      expect((await oldestActiveVisits(organizationId, hubA, 1500)).map((v) => v._id)).toEqual(oldestFirst(...active));
      expect((await oldestActiveVisits(organizationId, hubA, 3)).map((v) => v._id)).toEqual(oldestFirst(...active).slice(0, 3));
    });

    it("markVisitDispatched assigns an active visit once; UNASSIGNED puts it back and clears the dispatch fields", async () => {
      const { api, organizationId, hubA, visit } = await tenantWithHubs();
      const created = await createVisit(api, visit());
      const dispatch = {
        assignedVehicleId: "v1",
        routingResultId: "r1",
        routePlannedOrder: 3,
        eta: "2026-12-01 09:10",
        etd: "2026-12-01 09:25",
      };
      expect(
        await markVisitDispatched(organizationId, hubA, created._id, dispatch, "2026-12-01 08:00:00", {
          source: "dispatcher",
          userId: "dispatcher-1",
          at: "2026-12-01T08:00:00Z",
        }),
      ).toBe(true);
      const assigned = (await api.get(`/visit/${created._id}`)).body.data;
      expect(assigned).toMatchObject({ status: "ASSIGNED", ...dispatch });
      expect(await oldestActiveVisits(organizationId, hubA, 10)).toEqual([]);
      // No longer active: a second dispatch (a retried run) does not overwrite it.
      expect(
        await markVisitDispatched(organizationId, hubA, created._id, { ...dispatch, assignedVehicleId: "v2" }, "2026-12-01 08:01:00", {
          source: "dispatcher",
          userId: "dispatcher-1",
          at: "2026-12-01T08:01:00Z",
        }),
      ).toBe(false);

      // An assigned visit keeps ASSIGNED through other edits.
      expect((await api.patch(`/visit/${created._id}`, { name: "Renamed" })).body.data).toMatchObject({ status: "ASSIGNED", ...dispatch });
      const back = await api.patch(`/visit/${created._id}`, { status: "UNASSIGNED" });
      expect(back.body.data).toMatchObject({
        status: "UNASSIGNED",
        assignedVehicleId: null,
        routingResultId: null,
        routePlannedOrder: null,
        eta: null,
        etd: null,
      });
      expect((await oldestActiveVisits(organizationId, hubA, 10)).map((v) => v._id)).toEqual([created._id]);
    });
  });
});
