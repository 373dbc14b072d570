import { describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import { writableConfigurationFields } from "#shared/domain/configurations/schema";
import { writableHubFields } from "#shared/domain/hubs/schema";
import { writableVehicleFields } from "#shared/domain/vehicles/schema";
import { type ApiClient, newTenant } from "#test/support/local-api";

/**
 * Every field of an entity's schema round-trips through each write route it has (PUT and/or PATCH):
 * the write's answer and a fresh read both show the sent value. A store that writes a hand-kept
 * field list (and leaves a new field out) answers 200 showing the field and stores nothing; this
 * catches it. Each entity's `changed` body sets every writable field to a value other than the
 * created one; the first test fails when the schema gains a field the body does not change.
 */
interface Entity {
  path: string;
  writableFields: readonly string[];
  /** Creates what the entity needs (its hub …) and answers the create body and the changed body. */
  bodies(api: ApiClient): Promise<{ created: Record<string, unknown>; changed: Record<string, unknown> }>;
}

async function createdId(api: ApiClient, path: string, body: Record<string, unknown>): Promise<string> {
  const response = await api.post(path, body);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data._id;
}

const hubBody = (name: string) => ({ name, address: `${name} street 1`, lat: -6.2, lng: 106.8 });

const entities: Record<string, Entity> = {
  hub: {
    path: "/hub",
    writableFields: writableHubFields,
    bodies: async () => ({
      created: { name: "Depot", address: "Main St 1", lat: 52.5, lng: 13.4, timeZone: "Europe/Berlin" },
      changed: { name: "Depot 2", address: "Side St 2", lat: -6.25, lng: 106.85, timeZone: "Asia/Jakarta" },
    }),
  },
  vehicle: {
    path: "/vehicle",
    writableFields: writableVehicleFields,
    bodies: async (api) => {
      const [hubA, hubB] = [await createdId(api, "/hub", hubBody("A")), await createdId(api, "/hub", hubBody("B"))];
      return {
        created: { name: "Van 1", hubId: hubA, workingTime: { startTime: "07:00", endTime: "16:00", multiday: 0 } },
        changed: {
          name: "Van 2",
          hubId: hubB,
          type: "truck",
          plateNumber: "B 1234 XY",
          assignee: "driver-7",
          capacity: { weight: { min: 10, max: 500 }, volume: { max: 12 } },
          speed: 40,
          workingTime: { startTime: "06:00", endTime: "18:00", multiday: 1 },
          breakTime: { startTime: "12:00", endTime: "12:30" },
          tags: ["cold", "fragile"],
          fixedCost: 10,
          startLocation: { lat: -6.21, lng: 106.81 },
          endLocation: { lat: -6.22, lng: 106.82 },
          constraints: { maxVisits: 30, maxDistanceKm: 250, maxDurationMinutes: 540 },
        },
      };
    },
  },
  configuration: {
    path: "/routing/configuration",
    writableFields: writableConfigurationFields,
    bodies: async (api) => {
      const [hubA, hubB] = [await createdId(api, "/hub", hubBody("A")), await createdId(api, "/hub", hubBody("B"))];
      const vehicle = await createdId(api, "/vehicle", { name: "Van", hubId: hubB, workingTime: { startTime: "07:00", endTime: "16:00" } });
      return {
        created: { name: "Morning run", hubId: hubA },
        changed: {
          name: "Evening run",
          hubId: hubB,
          vehicleIds: [vehicle],
          returnToHub: false,
          defaultSpeed: 35,
          defaultVisitTime: 7,
          capacityConstraint: { weight: true, volume: false },
          objective: "hierarchical",
          timeLimitSeconds: 45,
          roadFactor: 1.5,
          travelProvider: "fake-osrm",
          travelFallback: "greatCircle",
          atRiskMinutes: 20,
          etaChangeMinutes: 5,
          autoArrival: true,
          arrivalRadiusMeters: 120,
        },
      };
    },
  },
};

/** The write routes of an entity, from the route table: PUT and PATCH on `<path>/{id}`. */
const writeRoutes = (path: string) =>
  routes.filter((route) => (route.method === "PUT" || route.method === "PATCH") && new RegExp(`^${path}/\\{\\w+\\}$`).test(route.path));

describe("Every schema field round-trips through each write route", () => {
  for (const [name, entity] of Object.entries(entities)) {
    describe(name, () => {
      it("the changed body changes every writable field of the schema, and the entity has a write route", async () => {
        const { api } = newTenant();
        const { created, changed } = await entity.bodies(api);
        expect(Object.keys(changed).sort()).toEqual([...entity.writableFields].sort());
        for (const field of entity.writableFields) expect(changed[field], field).not.toEqual(created[field]);
        expect(writeRoutes(entity.path).length).toBeGreaterThan(0);
      });

      for (const route of writeRoutes(entity.path)) {
        it(`${route.method} ${route.path}: the answer and a fresh read show every field sent`, async () => {
          const { api } = newTenant();
          const { created, changed } = await entity.bodies(api);
          const id = await createdId(api, entity.path, created);
          const written = await api.request(route.method, `${entity.path}/${id}`, { body: changed });
          expect(written.status, JSON.stringify(written.body)).toBe(200);
          const read = await api.get(`${entity.path}/${id}`);
          expect(read.status).toBe(200);
          for (const field of entity.writableFields) {
            expect(written.body.data[field], `${field} in the answer`).toEqual(changed[field]);
            expect(read.body.data[field], `${field} as stored`).toEqual(changed[field]);
          }
        });
      }
    });
  }
});
