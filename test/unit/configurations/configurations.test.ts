import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Caller } from "#shared/domain/caller";
import {
  configurationInputSchema,
  configurationPatchSchema,
  maxListedVehicles,
  type RoutingConfiguration,
} from "#shared/domain/configurations/schema";
import { type ConfigurationStore, createConfigurationService } from "#shared/domain/configurations/service";
import { NotFoundError } from "#shared/domain/errors";

const base = { name: "Daily", hubId: "h1" };
const caller = (hubIds: string[] = []): Caller => ({
  userId: "u",
  organizationId: "o",
  hubIds,
  permissions: new Set(),
  permissionDetails: [],
});

function memoryStore() {
  const profiles = new Map<string, { configuration: RoutingConfiguration; version: number }>();
  const store: ConfigurationStore = {
    insert: async (configuration) => void profiles.set(configuration._id, { configuration, version: 1 }),
    find: async (o, id) => {
      const found = profiles.get(id);
      return found && found.configuration.organizationId === o ? found : undefined;
    },
    replace: async (configuration, previous) => void profiles.set(configuration._id, { configuration, version: previous.version + 1 }),
    remove: async (_o, id) => profiles.delete(id),
    hasSchedules: async () => false,
    list: async () => ({ items: [...profiles.values()].map((entry) => entry.configuration), nextCursor: null }),
    idsOfHub: async (_o, hubId) =>
      [...profiles.values()].filter((entry) => entry.configuration.hubId === hubId).map((entry) => entry.configuration._id),
  };
  return { store, profiles };
}

describe("Schema: configuration profile", () => {
  it("applies the documented defaults", () => {
    expect(configurationInputSchema.parse(base)).toEqual({
      ...base,
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
    });
    expect(configurationInputSchema.parse({ ...base, capacityConstraint: { volume: false } }).capacityConstraint).toEqual({
      weight: true,
      volume: false,
    });
  });

  it.each([
    ["defaultSpeed", 5, 200],
    ["timeLimitSeconds", 1, 240],
    ["roadFactor", 1, 3],
  ])("property: %s is valid exactly inside [%d, %d]", (field, min, max) => {
    fc.assert(
      fc.property(fc.integer({ min: min - 10, max: max + 10 }), (value) => {
        expect(configurationInputSchema.safeParse({ ...base, [field]: value }).success).toBe(value >= min && value <= max);
      }),
    );
  });

  it(`lists at most ${maxListedVehicles} distinct vehicles`, () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);
    expect(configurationInputSchema.safeParse({ ...base, vehicleIds: ids(maxListedVehicles) }).success).toBe(true);
    expect(configurationInputSchema.safeParse({ ...base, vehicleIds: ids(maxListedVehicles + 1) }).success).toBe(false);
    expect(configurationInputSchema.safeParse({ ...base, vehicleIds: ["a", "b", "a"] }).success).toBe(false);
  });

  it("PATCH takes any non-empty subset of known fields", () => {
    expect(configurationPatchSchema.safeParse({ roadFactor: 2 }).success).toBe(true);
    expect(configurationPatchSchema.safeParse({}).success).toBe(false);
    expect(configurationPatchSchema.safeParse({ scheduleId: "s" }).success).toBe(false);
  });
});

describe("Service: configuration profiles", () => {
  it("findConfiguration reads by organization and id, without a caller", async () => {
    const { store } = memoryStore();
    const service = createConfigurationService(store);
    const created = await service.create(caller(), configurationInputSchema.parse(base));
    expect(await service.findConfiguration("o", created._id)).toEqual(created);
    expect(await service.findConfiguration("other", created._id)).toBeUndefined();
    expect(await service.configurationIdsOfHub("o", "h1")).toEqual([created._id]);
  });

  it("hides profiles of hubs outside the token's hubs and refuses to move one there", async () => {
    const { store } = memoryStore();
    const service = createConfigurationService(store);
    const created = await service.create(caller(), configurationInputSchema.parse(base));
    await expect(service.get(caller(["h2"]), created._id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.patch(caller(["h1"]), created._id, { hubId: "h2" })).rejects.toMatchObject({ errors: [{ field: "hubId" }] });
  });

  it("takes only a travel provider the operator declared, and says which ones are", async () => {
    const { store, profiles } = memoryStore();
    const service = createConfigurationService(store, undefined, () => ["greatCircle", "city-osrm"]);
    const created = await service.create(
      caller(),
      configurationInputSchema.parse({ ...base, travelProvider: "city-osrm", travelFallback: "greatCircle" }),
    );
    expect(created).toMatchObject({ travelProvider: "city-osrm", travelFallback: "greatCircle" });
    await expect(service.create(caller(), configurationInputSchema.parse({ ...base, travelProvider: "here" }))).rejects.toMatchObject({
      statusCode: 400,
      errors: [{ field: "travelProvider", message: "travelProvider must be one of the declared travel providers: greatCircle, city-osrm" }],
    });
    await expect(service.patch(caller(), created._id, { travelProvider: "gone" })).rejects.toMatchObject({
      errors: [{ field: "travelProvider" }],
    });
    expect(profiles.get(created._id)?.configuration.travelProvider).toBe("city-osrm");
    expect((await service.patch(caller(), created._id, { travelProvider: null })).travelProvider).toBeNull();
  });
});
