import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Caller } from "#shared/domain/caller";
import { ForbiddenError, NotFoundError } from "#shared/domain/errors";
import { hubInUseError, missingHubError } from "#shared/domain/hubs/errors";
import { type Hub, hubInputSchema, hubPatchSchema } from "#shared/domain/hubs/schema";
import { createCustomValues } from "#shared/domain/extensions/service";
import { createHubService as createHubServiceWith, type HubStore } from "#shared/domain/hubs/service";
import { storableNumberProblem } from "#shared/domain/schemas";

const base = { name: "Depot", address: "Main St 1", lat: 52.5, lng: 13.4 };
const caller = (hubIds: string[] = []): Caller => ({
  userId: "u",
  organizationId: "o",
  hubIds,
  permissions: new Set(),
  permissionDetails: [],
});

/** No extension data type in these organizations: hubs carry no custom values. */
const noCustomValues = createCustomValues({
  extensionTypes: { find: async () => undefined },
  relations: { store: { findById: async () => undefined }, entities: { hubExists: async () => false, vehicleExists: async () => false } },
});
const createHubService = (store: HubStore, now?: () => Date) => createHubServiceWith(store, noCustomValues, now);

function memoryStore() {
  const hubs = new Map<string, { hub: Hub; version: number }>();
  const store: HubStore = {
    insert: async (hub) => void hubs.set(hub._id, { hub, version: 1 }),
    find: async (o, id) => {
      const found = hubs.get(id);
      return found && found.hub.organizationId === o ? found : undefined;
    },
    update: async (hub, previous) => void hubs.set(hub._id, { hub, version: previous.version + 1 }),
    remove: async (_o, id) => void hubs.delete(id),
    list: async () => ({ items: [...hubs.values()], nextCursor: null }),
  };
  return { store, hubs };
}

describe("Schema: hub input", () => {
  it("defaults timeZone to null and canonicalises a valid zone", () => {
    expect(hubInputSchema.parse(base)).toEqual({ ...base, timeZone: null });
    expect(hubInputSchema.parse({ ...base, timeZone: "asia/jakarta" }).timeZone).toBe("Asia/Jakarta");
    expect(hubInputSchema.parse({ ...base, timeZone: "UTC" }).timeZone).toBe("UTC");
  });

  it.each([["Mars/Base"], [""], ["Europe/Berlin; DROP"], ["x".repeat(65)]])("rejects the time zone %j", (timeZone) => {
    expect(hubInputSchema.safeParse({ ...base, timeZone }).success).toBe(false);
  });

  it("property: a coordinate is valid exactly when lat ∈ [-90, 90] and lng ∈ [-180, 180] and both are numbers the store can keep", () => {
    fc.assert(
      fc.property(fc.double({ min: -200, max: 200, noNaN: true }), fc.double({ min: -200, max: 200, noNaN: true }), (lat, lng) => {
        const valid =
          lat >= -90 &&
          lat <= 90 &&
          lng >= -180 &&
          lng <= 180 &&
          storableNumberProblem(lat) === undefined &&
          storableNumberProblem(lng) === undefined;
        expect(hubInputSchema.safeParse({ ...base, lat, lng }).success).toBe(valid);
      }),
    );
  });

  it("PATCH takes any non-empty subset of known fields", () => {
    expect(hubPatchSchema.safeParse({ timeZone: null }).success).toBe(true);
    expect(hubPatchSchema.safeParse({}).success).toBe(false);
    expect(hubPatchSchema.safeParse({ refCount: 0 }).success).toBe(false);
  });
});

describe("Errors: hub references", () => {
  it("names hubId (or the given field) when the hub does not exist", () => {
    expect(missingHubError().errors).toEqual([{ field: "hubId", message: "hubId must name an existing hub of your organization" }]);
  });

  it.each([
    [{ vehicle: 1, visit: 0, configuration: 0 }, "1 vehicle"],
    [{ vehicle: 0, visit: 3, configuration: 1 }, "3 visits, 1 configuration profile"],
    [{ vehicle: 2, visit: 1, configuration: 2 }, "2 vehicles, 1 visit, 2 configuration profiles"],
  ])("counts what still uses the hub: %j", (counts, text) => {
    const error = hubInUseError(counts);
    expect(error.statusCode).toBe(409);
    expect(error.failedCode).toBe("hub-409");
    expect(error.message).toBe(`The hub is still used by ${text}; move or delete them before deleting the hub.`);
  });
});

describe("Service: hubs", () => {
  it("creates with a time-ordered id and UTC timestamps", async () => {
    const { store } = memoryStore();
    const service = createHubService(store, () => new Date("2026-11-22T10:00:00Z"));
    const hub = await service.create(caller(), hubInputSchema.parse(base));
    expect(hub).toMatchObject({
      ...base,
      timeZone: null,
      organizationId: "o",
      createdTime: "2026-11-22 10:00:00",
      updatedTime: "2026-11-22 10:00:00",
    });
    expect(hub._id.slice(0, 8)).toBe(Math.floor(Date.parse("2026-11-22T10:00:00Z") / 1000).toString(16));
  });

  it("refuses creation to a token restricted to hubs", async () => {
    const { store, hubs } = memoryStore();
    await expect(createHubService(store).create(caller(["h1"]), hubInputSchema.parse(base))).rejects.toBeInstanceOf(ForbiddenError);
    expect(hubs.size).toBe(0);
  });

  it("treats a hub outside the token's hubs as not found", async () => {
    const { store } = memoryStore();
    const service = createHubService(store);
    const hub = await service.create(caller(), hubInputSchema.parse(base));
    await expect(service.get(caller(["other"]), hub._id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.patch(caller(["other"]), hub._id, { name: "x" })).rejects.toBeInstanceOf(NotFoundError);
    expect(await service.get(caller([hub._id]), hub._id)).toEqual(hub);
  });

  it("validates the merged hub on PATCH and keeps id and creation time", async () => {
    const { store } = memoryStore();
    let clock = new Date("2026-11-22T10:00:00Z");
    const service = createHubService(store, () => clock);
    const hub = await service.create(caller(), hubInputSchema.parse({ ...base, timeZone: "Europe/Berlin" }));
    clock = new Date("2026-11-22T11:00:00Z");
    const patched = await service.patch(caller(), hub._id, { lat: 1 });
    expect(patched).toEqual({ ...hub, lat: 1, updatedTime: "2026-11-22 11:00:00" });
  });
});
