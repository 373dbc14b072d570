import { ALWAYS_ON_SHIFT } from "#test/support/shifts";
import { describe, expect, it } from "vitest";
import { haversineMetres } from "#shared/routing/matrix";
import type { Location } from "#shared/routing/model";
import { asymmetricLeg } from "#test/support/fake-osrm";
import { type ApiClient, newTenant } from "#test/support/local-api";
import { created, runOnDemand } from "#test/support/on-demand-runs";

/**
 * Road-network travel end to end: the suite's local stack declares `fake-osrm` (a local server speaking
 * OSRM's table protocol over a deliberately asymmetric network, at most 4 × 4 per request) and
 * `down-osrm` (nothing listens there); test/support/global-setup.ts. Profiles name them; on-demand runs
 * are handed to the run worker and the stored plans must drive the engine's numbers, one way or the other.
 */

const DEPOT: Location = { lat: -6.2, lng: 106.8 };
const SPOTS: Location[] = [
  { lat: -6.21, lng: 106.81 },
  { lat: -6.19, lng: 106.82 },
  { lat: -6.18, lng: 106.79 },
  { lat: -6.22, lng: 106.78 },
  { lat: -6.205, lng: 106.835 },
];

async function hubWithVisits(api: ApiClient, spots: Location[]) {
  const hub = await created(api, "/hub", { name: "Depot", address: "Jl. Depot 1", ...DEPOT });
  await created(api, "/vehicle", { name: "Van", hubId: hub._id, workingTime: ALWAYS_ON_SHIFT });
  for (const [i, spot] of spots.entries()) await created(api, "/visit", { hubId: hub._id, name: `V${i}`, coordinate: spot, visitTime: 5 });
  return hub;
}

describe("Road-network travel (osrm provider)", () => {
  it("plans with the engine's directed durations and distances, then reuses the hub's cache and asks only for new rows and columns", async () => {
    const tenant = newTenant();
    const hub = await hubWithVisits(tenant.api, SPOTS);
    const profile = await created(tenant.api, "/routing/configuration", {
      name: "Roads",
      hubId: hub._id,
      // The matrix gets the budget less the optimizer's second: room for its four requests on a busy machine
      // (4 s was not enough with four files on two cores; a few visits end the search early).
      timeLimitSeconds: 15,
      travelProvider: "fake-osrm",
    });
    expect(profile).toMatchObject({ travelProvider: "fake-osrm", travelFallback: "fail" });

    const first = await runOnDemand(tenant.api, profile._id);
    const points = SPOTS.length + 1;
    expect(first).toMatchObject({
      status: "done",
      summary: {
        visitsAssigned: 5,
        travel: { provider: "fake-osrm", source: "osrm", elementsRequested: points * points, elementsCached: 0, fallbackReason: null },
      },
    });
    const [route] = first.routes;
    const path: Location[] = [DEPOT, ...route.trips.map((trip: { coordinate: Location }) => trip.coordinate), DEPOT];
    // Every leg's distance is the engine's i → j entry, not the straight line × roadFactor.
    route.trips.forEach((trip: { distanceMeters: number }, k: number) => {
      expect(trip.distanceMeters).toBe(Math.round(asymmetricLeg(path[k]!, path[k + 1]!).metres));
      expect(Math.abs(trip.distanceMeters - Math.round(1.3 * haversineMetres(path[k]!, path[k + 1]!)))).toBeGreaterThan(5);
    });
    const driven = (order: Location[], measure: "seconds" | "metres") =>
      order.slice(1).reduce((sum, to, k) => sum + asymmetricLeg(order[k]!, to)[measure], 0);
    expect(Math.abs(route.distanceMeters - driven(path, "metres"))).toBeLessThanOrEqual(1);
    expect(route.travelMinutes).toBeCloseTo(driven(path, "seconds") / 60, 1);
    // The same tour driven the other way round takes another time: the plan used the directed entries.
    expect(Math.abs(driven([...path].reverse(), "seconds") - driven(path, "seconds")) / 60).toBeGreaterThan(1);

    // Same visits again: everything from the cache.
    const second = await runOnDemand(tenant.api, profile._id);
    expect(second.summary.travel).toMatchObject({ source: "osrm", elementsRequested: 0, elementsCached: points * points });
    const again: Location[] = [DEPOT, ...second.routes[0].trips.map((trip: { coordinate: Location }) => trip.coordinate), DEPOT];
    expect(Math.abs(second.routes[0].distanceMeters - driven(again, "metres"))).toBeLessThanOrEqual(1);

    // One new visit: only its row and its column are asked (2 n + 1 entries).
    await created(tenant.api, "/visit", { hubId: hub._id, name: "New", coordinate: { lat: -6.215, lng: 106.825 }, visitTime: 5 });
    const third = await runOnDemand(tenant.api, profile._id);
    expect(third.summary.travel).toMatchObject({ source: "osrm", elementsRequested: 2 * points + 1, elementsCached: points * points });
    expect(third.summary.visitsAssigned).toBe(6);
  });

  it("fails the run with the provider's reason, or falls back to great circle, as the profile says", async () => {
    const tenant = newTenant();
    const hub = await hubWithVisits(tenant.api, SPOTS.slice(0, 2));
    const strict = await created(tenant.api, "/routing/configuration", {
      name: "Strict",
      hubId: hub._id,
      // Room for the matrix: it gets the budget less the optimizer's second (shared/domain/runs/run-worker.ts).
      timeLimitSeconds: 3,
      travelProvider: "down-osrm",
    });
    const failed = await runOnDemand(tenant.api, strict._id);
    expect(failed.status).toBe("failed");
    // The provider and the kind of failure; never the operator's URL, an address or the socket's error.
    expect(failed.message).toMatch(
      /^Travel provider down-osrm: The osrm travel provider could not be reached \(2 attempts of a 3×3 request\)\./,
    );
    expect(failed.message).not.toMatch(/127\.0\.0\.1|http|ECONN|connect|fetch failed/i);

    const lenient = await created(tenant.api, "/routing/configuration", {
      name: "Lenient",
      hubId: hub._id,
      // Room for the matrix: it gets the budget less the optimizer's second (shared/domain/runs/run-worker.ts).
      timeLimitSeconds: 3,
      travelProvider: "down-osrm",
      travelFallback: "greatCircle",
    });
    const done = await runOnDemand(tenant.api, lenient._id);
    expect(done).toMatchObject({
      status: "done",
      summary: { visitsAssigned: 2, travel: { provider: "down-osrm", source: "greatCircle", elementsRequested: 0 } },
    });
    expect(done.summary.travel.fallbackReason).toBe("The osrm travel provider could not be reached (2 attempts of a 3×3 request).");
    const first = done.routes[0].trips[0];
    expect(first.distanceMeters).toBe(Math.round(1.3 * haversineMetres(DEPOT, first.coordinate)));
  });

  it("refuses a profile naming an undeclared provider with 400 listing the declared ones, and changes nothing", async () => {
    const tenant = newTenant();
    const hub = await created(tenant.api, "/hub", { name: "Depot", address: "Jl. Depot 1", ...DEPOT });
    const refused = await tenant.api.post("/routing/configuration", { name: "X", hubId: hub._id, travelProvider: "google" });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      status: false,
      failedCode: "sys-400",
      errors: [
        {
          field: "travelProvider",
          message:
            "travelProvider must be one of the declared travel providers: greatCircle, fake-osrm, down-osrm, silent-osrm, tables-only-osrm, priced-osrm",
        },
      ],
    });
    expect((await tenant.api.get(`/routing/configurations?hubId=${hub._id}`)).body.data).toHaveLength(0);
  });
});
