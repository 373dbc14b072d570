import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import { buildOpenApiDocument } from "#shared/http/openapi";
import type { RouteDefinition } from "#shared/http/route";
import { selfSignedCertificate } from "#test/fixtures/app-integrations/self-signed-certificate";
import { type ApiClient, type ApiResponse, newTenant } from "#test/support/local-api";
import { inlineRefs } from "#test/support/openapi-refs";

/**
 * Every field of an entity's schema round-trips through each write route it has (PUT, PATCH, and
 * the spec's POST update of app integrations): the write's answer and a fresh read both show the
 * sent value. A store that writes a hand-kept field list (and leaves a new field out) answers 200
 * showing the field and stores nothing; this catches it.
 *
 * The fields are not listed here: they are the request body's properties as the OpenAPI document
 * (the zod schema of the route) declares them, server-set (readOnly) ones aside. Each entity's
 * `changed` body sets every one of them to a value other than the created one, so the first test
 * of an entity fails when its schema gains a field the body does not change, and the last test
 * fails when the route table gains a write route of an entity not listed here.
 */
type Body = Record<string, unknown>;

interface Entity {
  /** The collection path: POST creates, `<path>/{id}` reads and writes. */
  path: string;
  /** Creates what the entity needs (its hub …) and answers the create body and the changed body. */
  bodies(api: ApiClient): Promise<{ created: Body; changed: Body }>;
  /** Schema fields this test does not send, each with why (covered by another test named there). */
  notSent?: Record<string, string>;
  /** Fields the domain does not let change after creation (sent unchanged and still checked), each with why. */
  unchangeable?: Record<string, string>;
  /** Where the answer carries the entity (default `data`). */
  answerKey?: string;
  /** Sends a body (default JSON). */
  send?(api: ApiClient, method: string, path: string, body: Body): Promise<ApiResponse>;
  /** Checks one field of an answer against the value sent (default: equal). */
  shows?: Record<string, (answered: unknown, sent: unknown) => Promise<void>>;
}

const json = (api: ApiClient, method: string, path: string, body: Body) => api.request(method, path, { body });

async function createdId(api: ApiClient, path: string, body: Body): Promise<string> {
  const response = await api.post(path, body);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data._id;
}

const hubBody = (name: string) => ({ name, address: `${name} street 1`, lat: -6.2, lng: 106.8 });

async function twoHubs(api: ApiClient) {
  return [await createdId(api, "/hub", hubBody("A")), await createdId(api, "/hub", hubBody("B"))] as const;
}

/** A multipart form (the app-integration routes take files): text parts as they are, `{ file }` parts as files. */
function formRequest(api: ApiClient, method: string, path: string, body: Body) {
  const boundary = `----round-trip-${randomBytes(8).toString("hex")}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(body)) {
    chunks.push(Buffer.from(`--${boundary}\r\n`));
    if (typeof value === "string") chunks.push(Buffer.from(`Content-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
    else {
      const { file } = value as { file: string };
      chunks.push(
        Buffer.from(
          `Content-Disposition: form-data; name="${name}"; filename="${name}.pem"\r\nContent-Type: application/x-pem-file\r\n\r\n`,
        ),
        Buffer.from(file),
        Buffer.from("\r\n"),
      );
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return api.request(method, path, {
    rawBody: Buffer.concat(chunks),
    headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
  });
}

const scheduleBase = {
  periode: "weekly",
  schedules: [{ day: "monday", time: ["07:00"] }],
  startTime: "2026-01-01 00:00",
  endTime: "2030-12-31 23:59",
};

const entities: Record<string, Entity> = {
  hub: {
    path: "/hub",
    notSent: { custom: "extension values, merged their own way: test/http/extensions.test.ts" },
    bodies: async () => ({
      created: { name: "Depot", address: "Main St 1", lat: 52.5, lng: 13.4, timeZone: "Europe/Berlin" },
      changed: { name: "Depot 2", address: "Side St 2", lat: -6.25, lng: 106.85, timeZone: "Asia/Jakarta" },
    }),
  },
  vehicle: {
    path: "/vehicle",
    notSent: { custom: "extension values, merged their own way: test/http/extensions.test.ts" },
    bodies: async (api) => {
      const [hubA, hubB] = await twoHubs(api);
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
    bodies: async (api) => {
      const [hubA, hubB] = await twoHubs(api);
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
          liveDayAssigned: "free",
          liveDayUseIdleVehicles: false,
        },
      };
    },
  },
  visit: {
    path: "/visit",
    bodies: async (api) => {
      const [hubA, hubB] = await twoHubs(api);
      const pickup = await createdId(api, "/visit", { hubId: hubB, name: "Pickup", coordinate: { lat: -6.18, lng: 106.83 } });
      return {
        created: { hubId: hubA, name: "Shop", coordinate: { lat: -6.19, lng: 106.82 } },
        changed: {
          hubId: hubB,
          name: "Shop 2",
          address: "Jalan Sudirman 5",
          coordinate: { lat: -6.2, lng: 106.84 },
          timeWindows: [{ startTime: "09:00", endTime: "12:00" }],
          visitTime: 15,
          capacity: { weight: 12, volume: 2 },
          tags: ["fragile"],
          status: "CANCELLED",
          priority: 5,
          pickupVisitId: pickup,
          requirements: { photo: true, signature: true, notes: true },
        },
      };
    },
  },
  schedule: {
    path: "/routing/schedule",
    bodies: async (api) => {
      const [hubA, hubB] = await twoHubs(api);
      const [profileA, profileB] = [
        await createdId(api, "/routing/configuration", { name: "A", hubId: hubA }),
        await createdId(api, "/routing/configuration", { name: "B", hubId: hubB }),
      ];
      return {
        created: { ...scheduleBase, name: "Mondays", configurationId: profileA },
        changed: {
          name: "Fortnightly",
          configurationId: profileB,
          periode: "custom",
          schedules: [{ day: "tuesday", time: ["08:00", "13:00"] }],
          startTime: "2027-01-04 00:00",
          endTime: "2027-06-30 23:59",
          frequency: "weekly",
          interval: 2,
          autoDispatch: true,
          active: false,
        },
      };
    },
  },
  dataType: {
    path: "/data-type",
    answerKey: "data_type",
    unchangeable: {
      commonData: "cannot change after creation (a type that extends an entity is always common): data-types.test.ts",
    },
    bodies: async () => {
      const field = (id: string, title: string) => ({ id, title, type: "text", required: false });
      return {
        created: { name: "Hub extras", fields: [field("dock", "Dock")], extends: { entity: "hub" }, commonData: true },
        changed: {
          name: "Vehicle extras",
          fields: [field("bay", "Bay"), field("gate", "Gate")],
          limitUser: true,
          commonData: true,
          uniqueTogether: [["bay", "gate"]],
          extends: { entity: "vehicle" },
          provider: "external-api",
          providerConfig: { url: "https://partner.example.com/extras" },
        },
      };
    },
    shows: {
      // The answer completes each field with its defaults; every attribute sent is shown as sent.
      fields: async (answered, sent) => expect(answered).toMatchObject(sent as object),
    },
  },
  webhook: {
    path: "/webhook",
    bodies: async () => ({
      created: { url: "https://hooks.example.com/a", events: ["routing.result.completed"], description: "First" },
      changed: {
        url: "https://hooks.example.com/b",
        events: ["routing.result.failed", "visit.completed"],
        description: "Second",
        enabled: false,
      },
    }),
  },
  appIntegration: {
    path: "/app-integration",
    send: formRequest,
    unchangeable: { integrationType: "azure is the only integration type (integrationTypes)" },
    bodies: async () => ({
      created: {
        integrationType: "azure",
        azureAuthUrl: "https://login.microsoftonline.com/tenant-a/saml2",
        azureCert: { file: selfSignedCertificate().pem },
      },
      changed: {
        integrationType: "azure",
        azureAuthUrl: "https://login.microsoftonline.com/tenant-b/saml2",
        azureCert: { file: selfSignedCertificate().pem },
      },
    }),
    shows: {
      // The certificate is answered as a presigned URL: it must serve the file sent.
      azureCert: async (answered, sent) => {
        const download = await fetch(answered as string);
        expect(download.status).toBe(200);
        expect(Buffer.from(await download.arrayBuffer()).toString()).toBe((sent as { file: string }).file);
      },
    },
  },
};

const document = buildOpenApiDocument(routes, { title: "t", version: "1", description: "" });

/** The fields a route's body declares (its OpenAPI request schema, i.e. its zod schema), server-set ones aside. */
function bodyFields(route: RouteDefinition): string[] {
  const operation = (document.paths as Record<string, Record<string, any>>)[route.path]?.[route.method.toLowerCase()];
  const [media] = Object.values<{ schema: unknown }>(operation?.requestBody?.content ?? {});
  const schema = inlineRefs(document, media?.schema ?? {});
  return Object.entries<{ readOnly?: boolean }>(schema.properties ?? {})
    .filter(([, property]) => property.readOnly !== true)
    .map(([field]) => field);
}

/** The write routes of one item path, from the route table: PUT and PATCH on `<path>/{id}`, and POST there (the spec's update). */
const writeRoutes = (path: string) =>
  routes.filter((route) => ["PUT", "PATCH", "POST"].includes(route.method) && new RegExp(`^${path}/\\{\\w+\\}$`).test(route.path));

/** Write routes whose bodies hold no fixed entity fields, and where their fields round-trip instead. */
const elsewhere: Record<string, string> = {
  "/extension/{entity}/{entityId}": "custom values of any entity: test/http/extensions.test.ts",
  "/data/type/{dataTypeName}/{dataId}": "a record's fields are its data type's: test/http/records.test.ts",
};

describe("Every schema field round-trips through each write route", () => {
  it("every write route of the route table is an entity's here (or named with where it is covered)", () => {
    const covered = Object.values(entities).flatMap((entity) => writeRoutes(entity.path));
    const uncovered = routes.filter(
      (route) => (route.method === "PUT" || route.method === "PATCH") && !covered.includes(route) && !(route.path in elsewhere),
    );
    expect(uncovered.map((route) => `${route.method} ${route.path}`)).toEqual([]);
  });

  for (const [name, entity] of Object.entries(entities)) {
    const send = entity.send ?? json;
    const fieldsOf = (route: RouteDefinition) => bodyFields(route).filter((field) => !(field in (entity.notSent ?? {})));

    describe(name, () => {
      it("has a write route, and the changed body changes every field each write route's schema declares", async () => {
        const { api } = newTenant();
        const { created, changed } = await entity.bodies(api);
        expect(writeRoutes(entity.path).length).toBeGreaterThan(0);
        for (const route of writeRoutes(entity.path)) {
          expect(Object.keys(changed).sort(), `${route.method} ${route.path}`).toEqual(fieldsOf(route).sort());
        }
        for (const field of Object.keys(changed)) {
          if (field in (entity.unchangeable ?? {})) expect(changed[field], field).toEqual(created[field]);
          else expect(changed[field], field).not.toEqual(created[field]);
        }
      });

      for (const route of writeRoutes(entity.path)) {
        it(`${route.method} ${route.path}: the answer and a fresh read show every field sent`, async () => {
          const { api } = newTenant();
          const { created, changed } = await entity.bodies(api);
          const made = await send(api, "POST", entity.path, created);
          expect(made.status, JSON.stringify(made.body)).toBe(201);
          const key = entity.answerKey ?? "data";
          const id = made.body[key]._id;
          const written = await send(api, route.method, `${entity.path}/${id}`, changed);
          expect(written.status, JSON.stringify(written.body)).toBe(200);
          const read = await api.get(`${entity.path}/${id}`);
          expect(read.status).toBe(200);
          for (const field of fieldsOf(route)) {
            const check = entity.shows?.[field] ?? (async (answered: unknown, sent: unknown) => expect(answered).toEqual(sent));
            for (const [where, answer] of [
              ["in the answer", written],
              ["as stored", read],
            ] as const) {
              await check(answer.body[key][field], changed[field]).catch((error: Error) => {
                throw new Error(`${field} ${where}: ${error.message}`);
              });
            }
          }
        });
      }
    });
  }
});
