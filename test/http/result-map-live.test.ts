import { describe, expect, it } from "vitest";
import { resultGeoJsonSchema } from "#shared/domain/routing-results/geojson";
import { rfc7946Problems } from "#test/support/geojson-rfc7946";
import { type ApiClient, apiClient, tokenFor } from "#test/support/local-api";
import { plannedDay } from "#test/support/planned-day";

/**
 * The map of the day through the local gateway and the real stores: a run and its map as planned, its
 * dispatch, the driver completing one stop and failing one, a position report, then map.svg and the GeoJSON
 * showing them (docs/api/routing-runs.md, "Result maps and GeoJSON").
 */

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
    const { api, organizationId, van, run, result, trips } = await plannedDay();
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
