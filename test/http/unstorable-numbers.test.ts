import { describe, expect, it } from "vitest";
import { type ApiClient, newTenant } from "#test/support/local-api";

/**
 * Numbers DynamoDB cannot keep (magnitudes below 1e-130, or beyond 2^53 − 1 for the document
 * client) are a 400 naming the field on every route, in every form a number arrives in — never a
 * 500 from the store, and nothing is stored.
 */
const tinyText = `0.${"0".repeat(199)}1`; // 1e-200 written out, as a "lat,lng" text carries it
const unstorable = [1e-200, 5e-324];

async function created(api: ApiClient, path: string, body: Record<string, unknown>, key = "data") {
  const response = await api.post(path, body);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body[key] as { _id: string };
}

async function setup() {
  const tenant = newTenant();
  const hub = await created(tenant.api, "/hub", { name: "A", address: "A street 1", lat: -6.2, lng: 106.8 });
  const vehicle = await created(tenant.api, "/vehicle", { name: "Van", hubId: hub._id });
  const visit = await created(tenant.api, "/visit", { name: "Stop", hubId: hub._id, coordinate: { lat: -6.19, lng: 106.82 } });
  const profileBody = { name: "Run", hubId: hub._id, vehicleIds: [vehicle._id] };
  const profile = await created(tenant.api, "/routing/configuration", profileBody);
  const dataType = await created(
    tenant.api,
    "/data-type",
    {
      name: "Place",
      fields: [
        { type: "title", title: "Name" },
        { id: "where", title: "Where", type: "geolocation", required: false },
      ],
    },
    "data_type",
  );
  return { ...tenant, hub, vehicle, visit, profile, profileBody, dataType };
}

const errorFields = (body: { errors?: Array<{ field: string; message: string }> }) => (body.errors ?? []).map((error) => error.field);

describe("Numbers the store cannot keep", () => {
  it.each(unstorable)("are a 400 naming the field on hubs, vehicles, visits, configurations and records (%s)", async (n) => {
    const { api, hub, vehicle, visit, profile, profileBody, dataType } = await setup();
    const hubBody = { name: "B", address: "B street 1", lat: -6.2, lng: 106.8 };
    const cases: Array<[string, string, Record<string, unknown>, string]> = [
      ["POST", "/hub", { ...hubBody, lat: n }, "lat"],
      ["POST", "/hub", { ...hubBody, lng: -n }, "lng"],
      ["PUT", `/hub/${hub._id}`, { ...hubBody, lat: n }, "lat"],
      ["PATCH", `/hub/${hub._id}`, { lng: n }, "lng"],
      ["POST", "/vehicle", { name: "Van 2", hubId: hub._id, fixedCost: n }, "fixedCost"],
      ["PATCH", `/vehicle/${vehicle._id}`, { fixedCost: n }, "fixedCost"],
      ["POST", "/visit", { name: "S", hubId: hub._id, coordinate: { lat: n, lng: 106.8 } }, "coordinate"],
      ["POST", "/visit", { name: "S", hubId: hub._id, coordinate: `${tinyText},106.8` }, "coordinate"],
      ["POST", "/visit", { name: "S", hubId: hub._id, coordinate: { lat: -6.2, lng: 106.8 }, visitTime: n }, "visitTime"],
      ["PATCH", `/visit/${visit._id}`, { visitTime: n }, "visitTime"],
      ["POST", "/routing/configuration", { ...profileBody, name: "Run 2", defaultVisitTime: n }, "defaultVisitTime"],
      ["PUT", `/routing/configuration/${profile._id}`, { ...profileBody, defaultVisitTime: n }, "defaultVisitTime"],
      ["POST", "/data", { dataTypeId: dataType._id, hubId: hub._id, dataId: "P1", where: { lat: n, lng: 1 } }, "where"],
      ["POST", "/data", { dataTypeId: dataType._id, hubId: hub._id, dataId: "P2", where: `${tinyText},1` }, "where"],
    ];
    for (const [method, path, body, field] of cases) {
      const response = await api.request(method, path, { body });
      expect(response.status, `${method} ${path} ${JSON.stringify(body).slice(0, 120)} → ${JSON.stringify(response.body)}`).toBe(400);
      expect(
        errorFields(response.body).some((name) => name === field || name.startsWith(`${field}.`)),
        `${method} ${path}: ${JSON.stringify(response.body)}`,
      ).toBe(true);
    }
    // Nothing changed: one hub, one vehicle, one visit, one profile, no record.
    expect((await api.get("/hubs")).body.data).toHaveLength(1);
    expect((await api.get(`/hub/${hub._id}`)).body.data).toMatchObject({ lat: -6.2, lng: 106.8 });
    expect((await api.get("/vehicles")).body.data).toHaveLength(1);
    expect((await api.get(`/visit/${visit._id}`)).body.data.visitTime).toBeNull();
    expect((await api.get(`/routing/configuration/${profile._id}`)).body.data.defaultVisitTime).toBe(10);
    expect((await api.get(`/data?dataTypeId=${dataType._id}`)).body.data).toEqual([]);
  });
});
