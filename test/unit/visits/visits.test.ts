import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Caller } from "#shared/domain/caller";
import { ValidationError } from "#shared/domain/errors";
import {
  coordinateSchema,
  isActiveVisitStatus,
  timeWindowSchema,
  type Visit,
  visitInputSchema,
  visitPatchSchema,
  visitStatuses,
} from "#shared/domain/visits/schema";
import { createVisitService, type VisitStore } from "#shared/domain/visits/service";

const base = { hubId: "h1", name: "Stop", coordinate: { lat: 1, lng: 2 } };
const caller = (hubIds: string[] = []): Caller => ({
  userId: "u",
  organizationId: "o",
  hubIds,
  permissions: new Set(),
  permissionDetails: [],
});
const two = (n: number) => String(n).padStart(2, "0");
const timeOfDay = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 })).map(([h, m]) => `${two(h)}:${two(m)}`);

function memoryStore() {
  const visits = new Map<string, { visit: Visit; version: number }>();
  const store: VisitStore = {
    insert: async (visit) => void visits.set(visit._id, { visit, version: 1 }),
    find: async (_o, id) => visits.get(id),
    replace: async (visit, previous) => void visits.set(visit._id, { visit, version: previous.version + 1 }),
    remove: async (_o, id) => visits.delete(id),
    list: async () => ({ items: [...visits.values()].map((entry) => entry.visit), nextCursor: null }),
    oldestActive: async () => [],
    history: async () => ({ items: [], nextCursor: null }),
    markDispatched: async () => true,
    deliveryOf: async (_o, pickupId) => [...visits.values()].find((entry) => entry.visit.pickupVisitId === pickupId)?.visit._id,
  };
  return { store, visits };
}

describe("Schema: coordinate", () => {
  it("property: the text form parses to the same coordinate as the object form", () => {
    fc.assert(
      fc.property(fc.double({ min: -90, max: 90, noNaN: true }), fc.double({ min: -180, max: 180, noNaN: true }), (lat, lng) => {
        // Plain decimal notation, as clients write it.
        const text = `${lat.toFixed(6)},${lng.toFixed(6)}`;
        expect(coordinateSchema.parse(text)).toEqual(coordinateSchema.parse({ lat: Number(lat.toFixed(6)), lng: Number(lng.toFixed(6)) }));
      }),
    );
  });

  it.each([["1;2"], ["1,2,3"], ["lat,lng"], ["1e5,2"], [""], ["91,0"], ["0,-181"]])("rejects the text %j", (text) => {
    expect(coordinateSchema.safeParse(text).success).toBe(false);
  });
});

describe("Schema: time windows", () => {
  it("property: an H:i window is valid exactly when start < end", () => {
    fc.assert(
      fc.property(timeOfDay, timeOfDay, (startTime, endTime) => {
        expect(timeWindowSchema.safeParse({ startTime, endTime }).success).toBe(startTime < endTime);
      }),
    );
  });

  it("property: a dated window is valid exactly when start < end, across days", () => {
    const date = fc.integer({ min: 1, max: 28 }).map((d) => `2026-03-${two(d)}`);
    fc.assert(
      fc.property(date, timeOfDay, date, timeOfDay, (d1, t1, d2, t2) => {
        const startTime = `${d1} ${t1}`;
        const endTime = `${d2} ${t2}`;
        expect(timeWindowSchema.safeParse({ startTime, endTime }).success).toBe(startTime < endTime);
      }),
    );
  });

  it.each([
    ["a leap day", "2028-02-29 09:00", "2028-02-29 10:00", true],
    ["no leap day", "2027-02-29 09:00", "2027-02-29 10:00", false],
    ["no 30 February", "2026-02-30 09:00", "2026-02-30 10:00", false],
    ["no 31 April", "2026-04-31 09:00", "2026-04-31 10:00", false],
    ["no month 13", "2026-13-01 09:00", "2026-13-01 10:00", false],
    ["the leap day of year 0", "0000-02-29 09:00", "0000-02-29 10:00", true],
    ["no leap day in 1900", "1900-02-29 09:00", "1900-02-29 10:00", false],
    ["hour 24", "24:00", "24:30", false],
    ["seconds", "09:00:00", "10:00:00", false],
    ["mixed forms", "09:00", "2026-12-01 10:00", false],
    ["across midnight as H:i", "22:00", "02:00", false],
    ["across midnight as dates", "2026-12-01 22:00", "2026-12-02 02:00", true],
  ])("%s → valid=%s", (_case, startTime, endTime, valid) => {
    expect(timeWindowSchema.safeParse({ startTime, endTime }).success).toBe(valid);
  });
});

describe("Schema: visit input", () => {
  it("applies the documented defaults", () => {
    expect(visitInputSchema.parse(base)).toEqual({
      ...base,
      address: null,
      timeWindows: [],
      visitTime: null,
      capacity: {},
      tags: [],
      status: "UNASSIGNED",
      priority: 3,
      pickupVisitId: null,
      requirements: { photo: false, signature: false, notes: false },
    });
  });

  it.each([
    "assignedVehicleId",
    "routingResultId",
    "routePlannedOrder",
    "eta",
    "etd",
    "proofs",
    "_id",
    "organizationId",
    "createdTime",
    "updatedTime",
  ])("ignores the server-set %s in POST and PATCH bodies (never stored from a body)", (field) => {
    for (const schema of [visitInputSchema, visitPatchSchema]) {
      const result = schema.safeParse({ ...base, [field]: "x" });
      expect(result.success).toBe(true);
      expect(result.data).not.toHaveProperty(field);
    }
  });

  it("still rejects any other unknown key", () => {
    const result = visitPatchSchema.safeParse({ name: "n", urgency: 1 });
    expect(result.error?.issues.flatMap((issue) => (issue.code === "unrecognized_keys" ? issue.keys : []))).toEqual(["urgency"]);
  });

  it("keeps exactly UNASSIGNED and ONGOING in the active index", () => {
    expect(visitStatuses.filter(isActiveVisitStatus)).toEqual(["UNASSIGNED", "ONGOING"]);
  });
});

describe("Service: visits", () => {
  it("refuses ASSIGNED from a client, on create and on change", async () => {
    const { store, visits } = memoryStore();
    const service = createVisitService(store);
    await expect(service.create(caller(), visitInputSchema.parse({ ...base, status: "ASSIGNED" }))).rejects.toBeInstanceOf(ValidationError);
    expect(visits.size).toBe(0);
    const visit = await service.create(caller(), visitInputSchema.parse(base));
    await expect(service.patch(caller(), visit._id, { status: "ASSIGNED" })).rejects.toMatchObject({ errors: [{ field: "status" }] });
  });

  it("clears the dispatch fields when a visit goes back to UNASSIGNED, and only then", async () => {
    const { store, visits } = memoryStore();
    const service = createVisitService(store);
    const visit = await service.create(caller(), visitInputSchema.parse(base));
    const dispatch = {
      assignedVehicleId: "v",
      routingResultId: "r",
      routePlannedOrder: 2,
      eta: "2026-12-01 09:00",
      etd: "2026-12-01 09:10",
    };
    visits.set(visit._id, { visit: { ...visit, status: "ASSIGNED", ...dispatch }, version: 2 });
    expect(await service.patch(caller(), visit._id, { name: "Renamed" })).toMatchObject({ status: "ASSIGNED", ...dispatch });
    expect(await service.patch(caller(), visit._id, { status: "DONE" })).toMatchObject({ status: "DONE", ...dispatch });
    expect(await service.patch(caller(), visit._id, { status: "UNASSIGNED" })).toMatchObject({
      status: "UNASSIGNED",
      assignedVehicleId: null,
      routingResultId: null,
      routePlannedOrder: null,
      eta: null,
      etd: null,
    });
  });

  it("refuses a hub outside the token's hubs, on create and on a move", async () => {
    const { store } = memoryStore();
    const service = createVisitService(store);
    await expect(service.create(caller(["h2"]), visitInputSchema.parse(base))).rejects.toMatchObject({ errors: [{ field: "hubId" }] });
    const visit = await service.create(caller(["h1"]), visitInputSchema.parse(base));
    await expect(service.patch(caller(["h1"]), visit._id, { hubId: "h2" })).rejects.toMatchObject({ errors: [{ field: "hubId" }] });
  });
});
