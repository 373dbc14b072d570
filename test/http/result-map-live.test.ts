import { SQSClient } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { appConfig } from "#shared/config/env";
import { resultGeoJsonSchema } from "#shared/domain/routing-results/geojson";
import { deliverQueuedRuns } from "#test/integration/runs/run-fixtures";
import { rfc7946Problems } from "#test/support/geojson-rfc7946";
import { type ApiClient, apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { ALWAYS_ON_SHIFT } from "#test/support/shifts";

/**
 * The map of the day through the local gateway and the real stores: a run and its map as planned, its
 * dispatch, the driver completing one stop and failing one, a position report, then map.svg and the GeoJSON
 * showing them (docs/api/routing-runs.md, "Result maps and GeoJSON").
 */
const sqs = new SQSClient({});

async function post(api: ApiClient, path: string, body: unknown) {
  const response = await api.post(path, body);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data;
}

type Feature = { geometry: { type: string; coordinates: number[] } | null; properties: Record<string, unknown> };
const geojsonOf = async (api: ApiClient, resultId: string) => {
  const response = await api.get(`/routing/result/${resultId}?format=geojson`);
  expect(response.status).toBe(200);
  const body = typeof response.body === "string" ? JSON.parse(response.body) : response.body;
  expect(rfc7946Problems(body)).toEqual([]);
  expect(resultGeoJsonSchema.safeParse(body).success).toBe(true);
  return body as { features: Feature[] };
};
const svgOf = async (api: ApiClient, resultId: string) => {
  const response = await api.get(`/routing/result/${resultId}/map.svg`);
  expect(response.status).toBe(200);
  return response.body as string;
};

describe("map.svg and GeoJSON of a dispatched result", () => {
  it("show done and failed stops, the vehicle's position and the projected ETAs; before dispatch, the plan as before", async () => {
    const { api, organizationId } = newTenant({ sub: "dispatcher-1" });
    const hub = await post(api, "/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
    const van = await post(api, "/vehicle", { name: "Van", hubId: hub._id, assignee: "driver-1", workingTime: ALWAYS_ON_SHIFT });
    for (const [name, coordinate] of [
      ["near", "-6.215,106.8"],
      ["far-1", "-6.35,106.8"],
      ["far-2", "-6.355,106.81"],
    ])
      await post(api, "/visit", { hubId: hub._id, name, coordinate });
    const profile = await post(api, "/routing/configuration", { name: "Plan", hubId: hub._id, timeLimitSeconds: 1, returnToHub: false });
    const run = await post(api, "/routing/result", { configurationId: profile._id });
    await deliverQueuedRuns(sqs, appConfig().RUN_QUEUE_URL, [run._id]);
    const result = (await api.get(`/routing/result/${run._id}`)).body.data;
    expect(result.status).toBe("done");
    const trips = result.routes[0].trips as Array<{ visitId: string; eta: string }>;
    const [first, second, third] = trips.map((trip) => trip.visitId) as [string, string, string];

    // Not dispatched: the map as planned — no live property, no vehicle, no projected column.
    const planned = await geojsonOf(api, run._id);
    expect(planned.features.some((feature) => feature.properties.kind === "vehicle")).toBe(false);
    const plannedStops = planned.features.filter((feature) => feature.properties.kind === "stop");
    expect(plannedStops).toHaveLength(3);
    for (const stop of plannedStops) expect(Object.keys(stop.properties)).not.toContain("status");
    const plannedSvg = await svgOf(api, run._id);
    expect(plannedSvg).not.toMatch(/Projected ETA|data-status|class="position/);

    expect((await api.post(`/routing/result/${run._id}/dispatch`, undefined)).body.data).toMatchObject({ success: 3, failed: 0 });
    const driver = apiClient(
      tokenFor({
        organizationId,
        sub: "driver-1",
        permissions: ["edit/visit-progress", "view/visit", "add/vehicle-position", "view/vehicle"],
      }),
    );
    const progress = async (visitId: string, body: Record<string, unknown>) => {
      const response = await driver.post(`/visit/${visitId}/progress`, body);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
    };
    await progress(first, { action: "complete" });
    await progress(second, { action: "fail", failureReason: "NOBODY_HOME" });
    await progress(third, { action: "start" });
    // Reported after the dispatch: a position older than the dispatch is not this route's (not drawn).
    const at = new Date().toISOString();
    const report = await driver.post(`/vehicle/${van._id}/positions`, { positions: [{ at, lat: -6.3, lng: 106.805, speedKmh: 30 }] });
    expect(report.status, JSON.stringify(report.body)).toBe(202);
    const route = (await api.get(`/vehicle/${van._id}/route`)).body.data;

    const day = await geojsonOf(api, run._id);
    const stops = day.features.filter((feature) => feature.properties.kind === "stop").map((feature) => feature.properties);
    const live = (visitId: string) => route.stops.find((stop: { visitId: string }) => stop.visitId === visitId);
    expect(stops).toEqual([
      expect.objectContaining({ visitId: first, eta: trips[0]?.eta, status: "DONE", projectedEta: live(first).projectedEta, risk: null }),
      expect.objectContaining({ visitId: second, status: "FAILED", risk: null }),
      // The open stop is projected from the fresh position, as GET /vehicle/{vehicleId}/route projects it.
      expect.objectContaining({ visitId: third, status: "EN_ROUTE", projectedEta: live(third).projectedEta, risk: live(third).risk }),
    ]);
    expect(live(third).projectedEta).toEqual(expect.any(String));
    const vehicles = day.features.filter((feature) => feature.properties.kind === "vehicle");
    expect(vehicles).toEqual([
      {
        type: "Feature",
        geometry: { type: "Point", coordinates: [106.805, -6.3] },
        properties: expect.objectContaining({ vehicleId: van._id, vehicleName: "Van", at, fresh: true, currentVisitId: third }),
      },
    ]);

    const svg = await svgOf(api, run._id);
    expect(svg.match(/<g class="stop done" data-status="DONE">/g)).toHaveLength(1);
    expect(svg.match(/<g class="stop failed" data-status="FAILED">/g)).toHaveLength(1);
    expect(svg.match(/<g class="stop en-route" data-status="EN_ROUTE">/g)).toHaveLength(1);
    expect(svg).toContain(`<g class="position" data-vehicle-id="${van._id}">`);
    expect(svg).toContain(">Done: 1</text>");
    expect(svg).toContain(">Failed: 1</text>");
    expect(svg).toContain(">Projected ETA</text>");
    // The side table's row of the open stop: planned ETA, then projected ETA, then status.
    const rowOf = (name: string) =>
      svg.split("\n").find((line) => line.startsWith(`<text x="60"`) && line.includes(`>${name}</text>`)) ?? "";
    const cells = (line: string) => [...line.matchAll(/>([^<]*)<\/text>/g)].map((match) => match[1]);
    const thirdName = result.routes[0].trips[2].visitName as string;
    expect(cells(rowOf(thirdName)).slice(0, 4)).toEqual([
      thirdName,
      trips[2]?.eta,
      live(third).projectedEta,
      live(third).risk === "ON_TIME" ? "EN_ROUTE" : `EN_ROUTE ${live(third).risk}`,
    ]);
  });
});
