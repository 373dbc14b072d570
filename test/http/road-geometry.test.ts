import { describe, expect, it } from "vitest";
import { decodePolyline } from "#shared/domain/travel/road-geometry";
import type { Location } from "#shared/routing/model";
import { roadLeg } from "#test/support/fake-osrm";
import { rfc7946Problems } from "#test/support/geojson-rfc7946";
import { newTenant } from "#test/support/local-api";
import { created, runOnDemand } from "#test/support/on-demand-runs";
import { ALWAYS_ON_SHIFT } from "#test/support/shifts";

/**
 * Road geometry end to end: after solving on `fake-osrm`'s matrix, the run worker asks the engine's route service
 * (OSRM `/route`, whose fake answers each leg as an L: along the latitude, then the longitude) for the routes' road
 * lines, stores them with the result, counts them in the organization's travel usage, and the map and GeoJSON draw
 * them; `tables-only-osrm` answers tables but refuses every route request: the run still succeeds, its lines drawn
 * straight and labelled so (test/support/global-setup.ts declares both).
 */

const DEPOT: Location = { lat: -6.2, lng: 106.8 };
const SPOTS: Location[] = [
  { lat: -6.21, lng: 106.81 },
  { lat: -6.19, lng: 106.82 },
  { lat: -6.18, lng: 106.79 },
];

async function runOn(provider: string) {
  const tenant = newTenant();
  const hub = await created(tenant.api, "/hub", { name: "Depot", address: "Jl. Depot 1", ...DEPOT });
  await created(tenant.api, "/vehicle", { name: "Van", hubId: hub._id, workingTime: ALWAYS_ON_SHIFT });
  for (const [i, spot] of SPOTS.entries())
    await created(tenant.api, "/visit", { hubId: hub._id, name: `V${i}`, coordinate: spot, visitTime: 5 });
  // Room for the matrix and the route request on a busy machine (the matrix gets the budget less the optimizer's second;
  // 5 s was not enough with four files on two cores). Three visits end the search early, so this costs no time when idle.
  const profile = await created(tenant.api, "/routing/configuration", {
    name: "Roads",
    hubId: hub._id,
    timeLimitSeconds: 15,
    travelProvider: provider,
  });
  const result = await runOnDemand(tenant.api, profile._id);
  const geojson = (await tenant.api.get(`/routing/result/${result._id}?format=geojson`)).body;
  const svg = (await tenant.api.get(`/routing/result/${result._id}/map.svg`)).body as string;
  const day = new Date().toISOString().slice(0, 10);
  const usage = (await tenant.api.get(`/usage?from=${day}&to=${day}`)).body.data;
  return { result, geojson, svg, travelElements: usage.totals.runs.travelElements as number };
}

const routeFeature = (geojson: {
  features: Array<{ geometry: { type: string; coordinates: unknown } | null; properties: Record<string, unknown> }>;
}) => geojson.features.find((feature) => feature.properties.kind === "route")!;

describe("Road geometry of a plan's routes (osrm route service)", () => {
  it("a road-engine run stores each leg's road line, counts the route request in the travel usage, and the map and GeoJSON draw the roads", async () => {
    const { result, geojson, svg, travelElements } = await runOn("fake-osrm");
    expect(result.status).toBe("done");
    const [route] = result.routes;
    const path: Location[] = [DEPOT, ...route.trips.map((trip: { coordinate: Location }) => trip.coordinate), DEPOT];
    // Three stops and the drive back: four legs, one route request.
    expect(result.summary.travel).toMatchObject({
      source: "osrm",
      elementsRequested: 16,
      geometry: { lines: "road", routesWithRoads: 1, requests: 1, elementsRequested: 4, reason: null },
    });
    expect(route.roadGeometry.legs).toHaveLength(4);
    route.roadGeometry.legs.forEach((leg: string, k: number) => {
      expect(decodePolyline(leg)).toEqual(roadLeg(path[k]!, path[k + 1]!));
    });
    // The matrix's 16 elements and the route's 4 legs, on the organization's usage.
    expect(travelElements).toBe(16 + 4);

    expect(rfc7946Problems(geojson)).toEqual([]);
    const line = routeFeature(geojson);
    expect(line.properties).toMatchObject({ lineKind: "road", travelSource: "osrm" });
    const roads = path.slice(1).flatMap((to, k) => roadLeg(path[k]!, to).slice(k === 0 ? 0 : 1));
    expect(line.geometry?.coordinates).toEqual(roads.map((at) => [at.lng, at.lat]));

    // The SVG: the out line through every road corner, the drive back dashed, the legend says roads.
    expect(svg).toContain(">Lines follow the roads<");
    expect(svg).toContain(">(osrm road geometry)<");
    expect(svg).not.toContain("Straight lines");
    expect(svg.match(/<polyline class="road"/g)).toHaveLength(1);
    expect(svg.match(/<polyline class="road back"/g)).toHaveLength(1);
    const outPoints = /<polyline class="road" points="([^"]+)"/.exec(svg)![1]!.split(" ");
    expect(outPoints).toHaveLength(1 + 2 * route.trips.length);
  });

  it("a route service that fails: the run succeeds with the engine's matrix, its lines straight and labelled, no provider detail answered", async () => {
    const { result, geojson, svg, travelElements } = await runOn("tables-only-osrm");
    expect(result).toMatchObject({
      status: "done",
      summary: {
        visitsAssigned: 3,
        travel: {
          source: "osrm",
          geometry: {
            lines: "straight",
            routesWithRoads: 0,
            requests: 1,
            elementsRequested: 0,
            reason: "The osrm route service refused a request. 1 of 1 route is drawn straight.",
          },
        },
      },
    });
    expect(JSON.stringify(result)).not.toMatch(/127\.0\.0\.1|http:|NoRoute|injected/);
    expect(result.routes[0].roadGeometry).toBeUndefined();
    // Only the matrix is charged: the refused request answered no leg.
    expect(travelElements).toBe(16);

    expect(rfc7946Problems(geojson)).toEqual([]);
    expect(routeFeature(geojson).properties).toMatchObject({ lineKind: "straight", travelSource: "osrm" });
    expect(svg).toContain(">Straight lines between stops<");
    expect(svg).toContain(">(great circle), not along roads<");
    expect(svg).not.toContain("Lines follow the roads");
    expect(svg.match(/<polyline class="straight"/g)).toHaveLength(1);
  });
});
