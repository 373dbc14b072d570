import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { POSITION_HISTORY_DAYS, POSITION_RATE } from "#shared/domain/vehicles/positions";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { rfc7946Problems } from "#test/support/geojson-rfc7946";
import { type ApiClient, apiClient, newOrganizationId, newTenant, tokenFor } from "#test/support/local-api";
import { refusal } from "#test/support/refusals";

/**
 * Vehicle positions through the local gateway (docs/api/execution.md, "Positions"): reports with
 * their counts, the latest position and the history, who may report, tenancy and hubs, the per-vehicle
 * rate and the plan's monthly samples.
 */
async function fleet(organizationId = newOrganizationId()) {
  const api = apiClient(tokenFor({ organizationId, sub: "dispatcher-1" }));
  const tenant = { api, organizationId };
  const hub = async (name: string) => (await api.post("/hub", { name, address: "Jl. 1", lat: -6.2, lng: 106.8 })).body.data._id as string;
  const hubA = await hub("Depot A");
  const hubB = await hub("Depot B");
  const vehicle = async (name: string, hubId: string, assignee: string | null) =>
    (await api.post("/vehicle", { name, hubId, assignee })).body.data._id as string;
  const van = await vehicle("Van A1", hubA, "driver-1");
  const driver = apiClient(tokenFor({ organizationId, sub: "driver-1", permissions: ["add/vehicle-position", "view/vehicle"] }));
  return { ...tenant, hubA, hubB, van, vehicle, driver };
}

/** An instant `secondsAgo` before now, ISO. */
const ago = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000).toISOString();
const sample = (at: string, lat = -6.2, lng = 106.8, extra: Record<string, number> = {}) => ({ at, lat, lng, ...extra });
const report = (api: ApiClient, vehicleId: string, positions: unknown[]) => api.post(`/vehicle/${vehicleId}/positions`, { positions });
const latestOf = async (api: ApiClient, vehicleId: string, hubId: string) =>
  ((await api.get(`/vehicles/positions?hubId=${hubId}`)).body.data as Array<{ vehicleId: string; position: unknown }>).find(
    (item) => item.vehicleId === vehicleId,
  )?.position;

describe("POST /vehicle/{vehicleId}/positions", () => {
  it("answers 202 with accepted, duplicates and stale; the newest sample is the latest and every new one is in the history", async () => {
    const { api, driver, van, hubA } = await fleet();
    const [t300, t200, t100, t50] = [300, 200, 100, 50].map(ago) as [string, string, string, string];
    const first = await report(driver, van, [
      sample(t300, -6.21, 106.81, { accuracyM: 5, speedKmh: 30, headingDeg: 90 }),
      sample(t200, -6.22, 106.82),
      sample(t100, -6.23, 106.83),
    ]);
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ status: true, data: { accepted: 3, duplicates: 0, stale: 0 } });

    // The same three again (one in another notation of the same instant), and a newer one sent twice.
    const again = await report(driver, van, [
      sample(t300, -6.21, 106.81),
      sample(t200),
      sample(t100.replace("Z", "+00:00")),
      sample(t50, -6.24, 106.84),
      sample(t50, -6.24, 106.84),
    ]);
    expect(again.status).toBe(202);
    expect(again.body.data).toEqual({ accepted: 1, duplicates: 4, stale: 0 });

    // Older than the latest, never sent: kept in the history, the latest stays.
    const late = await report(driver, van, [sample(ago(150), -6.25, 106.85)]);
    expect(late.body.data).toEqual({ accepted: 0, duplicates: 0, stale: 1 });

    const latest = (await latestOf(api, van, hubA)) as { lat: number; at: string };
    expect(latest).toMatchObject({ lat: -6.24, lng: 106.84, accuracyM: null });
    const track = await history(api, van);
    expect(track.map((point) => point.lat)).toEqual([-6.21, -6.22, -6.25, -6.23, -6.24]);
    expect(track[0]).toEqual({ at: track[0]!.at, lat: -6.21, lng: 106.81, accuracyM: 5, speedKmh: 30, headingDeg: 90 });
    expect(track.at(-1)!.at).toBe(latest.at);
  });

  it("keeps each sample 30 days through the table's TTL attribute, in the vehicle's own partition", async () => {
    const { organizationId, driver, van } = await fleet();
    const at = ago(60);
    expect((await report(driver, van, [sample(at)])).status).toBe(202);
    const stored = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.vehiclePositionSample(organizationId, van, new Date(at).toISOString()) }),
    );
    expect(stored.Item?.PK).toBe(keys.vehiclePartition(organizationId, van));
    expect(stored.Item?.expiresAt).toBe(Math.floor(Date.parse(at) / 1000) + POSITION_HISTORY_DAYS * 86_400);
  });

  it("refuses bad samples and an `at` outside [now − 24 h, now + 60 s] with a 400 naming each, storing nothing", async () => {
    const { api, driver, van, hubA } = await fleet();
    for (const positions of [
      [],
      Array.from({ length: 21 }, (_, i) => sample(ago(i + 1))),
      [sample(ago(1), 91, 0)],
      [sample(ago(1), 0, 181)],
      [{ ...sample(ago(1)), headingDeg: 360 }],
      [{ ...sample(ago(1)), speedKmh: -1 }],
      [{ ...sample(ago(1)), extra: 1 }],
      [{ lat: 0, lng: 0 }],
      [sample("yesterday")],
    ]) {
      const answer = await report(driver, van, positions);
      expect(answer.status, JSON.stringify(positions).slice(0, 80)).toBe(400);
      expect(answer.body).toMatchObject({ status: false, failedCode: "sys-400" });
    }
    const range = await report(driver, van, [sample(ago(10)), sample(ago(25 * 3600)), sample(ago(-120))]);
    expect(refusal(range)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(range.body.errors.map((error: { field: string }) => error.field)).toEqual(["positions.1.at", "positions.2.at"]);
    expect(await latestOf(api, van, hubA)).toBeNull();
    expect(await history(api, van, `from=${encodeURIComponent(ago(26 * 3600))}`)).toEqual([]);
  });

  it("lets only the vehicle's driver or a holder of edit/vehicle report: another driver is 403 position-403", async () => {
    const { api, organizationId, driver, van } = await fleet();
    const other = apiClient(tokenFor({ organizationId, sub: "driver-2", permissions: ["add/vehicle-position"] }));
    const refused = await report(other, van, [sample(ago(5))]);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ status: false, failedCode: "position-403" });
    expect(await history(api, van)).toEqual([]);
    expect((await report(driver, van, [sample(ago(4))])).status).toBe(202);
    // A dispatcher (edit/vehicle) reports for the driver; a vehicle without a driver only that way.
    expect((await report(api, van, [sample(ago(3))])).status).toBe(202);
    const noDriver = await fleet();
    const unassigned = await noDriver.vehicle("Spare", noDriver.hubA, null);
    const stranger = apiClient(
      tokenFor({ organizationId: noDriver.organizationId, sub: "driver-1", permissions: ["add/vehicle-position"] }),
    );
    expect((await report(stranger, unassigned, [sample(ago(3))])).body.failedCode).toBe("position-403");
  });

  it("answers 404 for another organization's vehicle and for a vehicle of a hub the token does not allow", async () => {
    const { organizationId, van, hubB, vehicle, driver } = await fleet();
    const outsider = newTenant();
    expect(refusal(await report(outsider.api, van, [sample(ago(5))]))).toEqual({ status: 404, failedCode: "sys-404" });
    expect(refusal(await outsider.api.get(`/vehicle/${van}/positions`))).toEqual({ status: 404, failedCode: "sys-404" });
    const vanB = await vehicle("Van B1", hubB, "driver-1");
    const hubLimited = apiClient(tokenFor({ organizationId, sub: "driver-1", hubIds: [hubB] }));
    expect(refusal(await report(hubLimited, van, [sample(ago(5))]))).toEqual({ status: 404, failedCode: "sys-404" });
    expect(refusal(await hubLimited.get(`/vehicle/${van}/positions`))).toEqual({ status: 404, failedCode: "sys-404" });
    expect((await report(hubLimited, vanB, [sample(ago(5))])).status).toBe(202);
    expect((await report(driver, van, [sample(ago(5))])).status).toBe(202);
    // The hub-limited list holds only hub B's vehicles; asking for hub A is a 400 as in GET /vehicles.
    const listed = await hubLimited.get("/vehicles/positions");
    expect(listed.body.data.map((item: { vehicleId: string }) => item.vehicleId)).toEqual([vanB]);
    expect((await outsider.api.get("/vehicles/positions")).body.data).toEqual([]);
  });

  it(`limits a vehicle to ${POSITION_RATE.requests} reports a window: then 429 position-429 with Retry-After, nothing stored`, async () => {
    const { api, driver, van } = await fleet();
    // Start early in a window, so the window does not turn over while the reports go in.
    const intoWindow = (Date.now() / 1000) % POSITION_RATE.windowSeconds;
    if (intoWindow > POSITION_RATE.windowSeconds - 15)
      await new Promise((resolve) => setTimeout(resolve, (POSITION_RATE.windowSeconds - intoWindow + 0.1) * 1000));
    for (let i = 0; i < POSITION_RATE.requests; i++) expect((await report(driver, van, [sample(ago(100 - i))])).status).toBe(202);
    const refused = await report(driver, van, [sample(ago(1))]);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ status: false, failedCode: "position-429" });
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(POSITION_RATE.windowSeconds);
    expect(await history(api, van)).toHaveLength(POSITION_RATE.requests);
  });

  it("counts samples against the plan's positionSamplesPerMonth: over it 429 position-quota-429, nothing stored", async () => {
    const organizationId = newOrganizationId();
    await seedTenant(organizationId, "free");
    const { api, driver, van, hubA } = await fleet(organizationId);
    const month = new Date().toISOString().slice(0, 7);
    await documentClient().send(
      new PutCommand({ TableName: tableName(), Item: { ...keys.positionSamplesTotal(organizationId, month), samples: 99_990 } }),
    );
    const over = await report(
      driver,
      van,
      Array.from({ length: 11 }, (_, i) => sample(ago(60 - i))),
    );
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ status: false, failedCode: "position-quota-429" });
    expect(over.body.message).toContain("plan free allows 100000 position samples per month, 99990 are used");
    expect(await latestOf(api, van, hubA)).toBeNull();
    // What still fits is granted, exactly.
    expect(
      (
        await report(
          driver,
          van,
          Array.from({ length: 10 }, (_, i) => sample(ago(60 - i))),
        )
      ).body.data.accepted,
    ).toBe(10);
    const counter = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.positionSamplesTotal(organizationId, month), ConsistentRead: true }),
    );
    expect(counter.Item?.samples).toBe(100_000);
    expect((await report(driver, van, [sample(ago(1))])).body.failedCode).toBe("position-quota-429");
  });
});

describe("GET /vehicle/{vehicleId}/positions and GET /vehicles/positions", () => {
  it("pages the history between from and to, and answers a page as a GeoJSON LineString", async () => {
    const { api, driver, van } = await fleet();
    const times = [500, 400, 300, 200, 100].map(ago);
    await report(
      driver,
      van,
      times.map((at, i) => sample(at, -6.2 - i / 100, 106.8 + i / 100)),
    );
    const window = `from=${encodeURIComponent(times[1]!)}&to=${encodeURIComponent(times[3]!)}`;
    const page = await api.get(`/vehicle/${van}/positions?${window}&limit=2`);
    expect(page.status).toBe(200);
    expect(page.body.data.map((point: { at: string }) => point.at)).toEqual([times[1], times[2]]);
    const rest = await api.get(`/vehicle/${van}/positions?${window}&limit=2&cursor=${encodeURIComponent(page.body.nextCursor)}`);
    expect(rest.body.data.map((point: { at: string }) => point.at)).toEqual([times[3]]);
    expect(rest.body.nextCursor).toBeNull();
    // A cursor belongs to its range.
    expect(refusal(await api.get(`/vehicle/${van}/positions?limit=2&cursor=${encodeURIComponent(page.body.nextCursor)}`))).toEqual({
      status: 400,
      failedCode: "sys-400",
    });
    expect(
      (await api.get(`/vehicle/${van}/positions?from=${encodeURIComponent(times[3]!)}&to=${encodeURIComponent(times[1]!)}`)).status,
    ).toBe(400);

    const geojson = await api.get(`/vehicle/${van}/positions?format=geojson`);
    expect(geojson.status).toBe(200);
    expect(geojson.headers.get("content-type")).toContain("application/geo+json");
    expect(rfc7946Problems(geojson.body)).toEqual([]);
    expect(geojson.body).toMatchObject({
      type: "Feature",
      geometry: { type: "LineString" },
      properties: { vehicleId: van, nextCursor: null },
    });
    expect(geojson.body.geometry.coordinates[0]).toEqual([106.8, -6.2]);
    expect(geojson.body.properties.times).toEqual(times);
    const single = await api.get(`/vehicle/${van}/positions?format=geojson&limit=1`);
    expect(single.body.geometry).toBeNull();
  });

  it("lists a hub's vehicles with their latest position, paginated, and as a GeoJSON FeatureCollection of Points", async () => {
    const { api, driver, van, hubA, hubB, vehicle } = await fleet();
    const second = await vehicle("Van A2", hubA, "driver-2");
    await vehicle("Van B1", hubB, "driver-3");
    await report(driver, van, [sample(ago(10), -6.3, 106.9)]);
    const first = await api.get(`/vehicles/positions?hubId=${hubA}&limit=1`);
    expect(first.status).toBe(200);
    const next = await api.get(`/vehicles/positions?hubId=${hubA}&limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(next.body.nextCursor).toBeNull();
    const items = [...first.body.data, ...next.body.data];
    expect(items.map((item: { vehicleId: string }) => item.vehicleId).sort()).toEqual([van, second].sort());
    expect(items.find((item: { vehicleId: string }) => item.vehicleId === van)).toMatchObject({
      hubId: hubA,
      name: "Van A1",
      position: { lat: -6.3, lng: 106.9 },
    });
    expect(items.find((item: { vehicleId: string }) => item.vehicleId === second).position).toBeNull();

    const collection = await api.get(`/vehicles/positions?hubId=${hubA}&format=geojson`);
    expect(collection.headers.get("content-type")).toContain("application/geo+json");
    expect(rfc7946Problems(collection.body)).toEqual([]);
    expect(collection.body).toMatchObject({
      type: "FeatureCollection",
      nextCursor: null,
      features: [{ type: "Feature", geometry: { type: "Point", coordinates: [106.9, -6.3] }, properties: { vehicleId: van, hubId: hubA } }],
    });
    expect(collection.body.features).toHaveLength(1);
  });
});

async function history(api: ApiClient, vehicleId: string, query = "") {
  const answer = await api.get(`/vehicle/${vehicleId}/positions?limit=100${query ? `&${query}` : ""}`);
  expect(answer.status).toBe(200);
  return answer.body.data as Array<{ at: string; lat: number; lng: number }>;
}

/** The tenant record the operator's CLI writes (before the organization's first call: the authorizer caches it). */
function seedTenant(organizationId: string, plan: string) {
  return documentClient().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.tenant(organizationId),
        GSI1PK: keys.tenantsIndexPartition,
        GSI1SK: organizationId,
        entity: "tenant",
        organizationId,
        plan,
        status: "active",
        apiKeyValue: `key-${organizationId}`,
        createdTime: "2026-01-01 00:00:00",
        updatedTime: "2026-01-01 00:00:00",
      },
    }),
  );
}
