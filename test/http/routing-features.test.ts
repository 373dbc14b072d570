import { ALWAYS_ON_SHIFT } from "#test/support/shifts";
import { describe, expect, it } from "vitest";
import { haversineMetres } from "#shared/routing/matrix";
import { newTenant } from "#test/support/local-api";
import { created, runOnDemand } from "#test/support/on-demand-runs";
import { refusal } from "#test/support/refusals";

/**
 * Route-planner features end to end through the local gateway: visit priority, a vehicle that starts
 * from the driver's home and ends elsewhere, and a maximum number of visits per route. The visits and
 * vehicles are created over HTTP, an on-demand run is handed to the run worker, and the stored result
 * must honour every rule.
 */

const HOME = { lat: -6.3, lng: 106.8 };
const OFFICE = { lat: -6.1, lng: 106.9 };

interface Trip {
  visitId: string;
  distanceMeters: number;
  coordinate: { lat: number; lng: number };
}

describe("Routing features through a run", () => {
  it("keeps the high-priority visits when the route is full, starts at the driver's home, ends at the set end, respects maxVisits", async () => {
    const tenant = newTenant();
    const hub = await created(tenant.api, "/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
    const vehicle = await created(tenant.api, "/vehicle", {
      name: "Home van",
      hubId: hub._id,
      workingTime: ALWAYS_ON_SHIFT,
      startLocation: `${HOME.lat},${HOME.lng}`,
      endLocation: OFFICE,
      constraints: { maxVisits: 2 },
    });
    expect(vehicle).toMatchObject({ startLocation: HOME, endLocation: OFFICE, constraints: { maxVisits: 2 } });
    // The low-priority visit is the cheapest to serve (next to the hub, on the way to the office), yet it is the one left out.
    const low = await created(tenant.api, "/visit", { hubId: hub._id, name: "Low", coordinate: "-6.2,106.81", priority: 1 });
    const highA = await created(tenant.api, "/visit", { hubId: hub._id, name: "High A", coordinate: "-6.27,106.8", priority: 5 });
    const highB = await created(tenant.api, "/visit", { hubId: hub._id, name: "High B", coordinate: "-6.25,106.8" });
    expect(low.priority).toBe(1);
    expect(highB.priority).toBe(3);
    const profile = await created(tenant.api, "/routing/configuration", {
      name: "Plan",
      hubId: hub._id,
      timeLimitSeconds: 2,
      returnToHub: false,
    });

    const result = await runOnDemand(tenant.api, profile._id);
    expect(result).toMatchObject({
      status: "done",
      summary: { visitsPlanned: 3, visitsAssigned: 2, visitsDropped: 1, endedBy: expect.stringMatching(/^(earlyStop|budget)$/) },
    }); // stored and served (which one depends on the machine's speed)
    expect(result.dropped.map((d: { visitId: string }) => d.visitId)).toEqual([low._id]);
    expect(result.routes).toHaveLength(1);
    const [route] = result.routes;
    const trips: Trip[] = route.trips;
    expect(trips.map((t) => t.visitId)).toEqual([highA._id, highB._id]); // from home (south) northwards
    const roadMetres = (a: { lat: number; lng: number }, b: { lat: number; lng: number }) => profile.roadFactor * haversineMetres(a, b);
    // The first leg starts at home, not at the hub.
    expect(trips[0]!.distanceMeters).toBe(Math.round(roadMetres(HOME, trips[0]!.coordinate)));
    // The route drives on to the set end although the profile does not return to the hub.
    const driven = trips.reduce((sum, t) => sum + t.distanceMeters, 0);
    expect(Math.abs(route.distanceMeters - (driven + roadMetres(trips[1]!.coordinate, OFFICE)))).toBeLessThanOrEqual(2);
  });

  it("rejects a priority outside 1–5 and a bad start location with 400 naming the field", async () => {
    const tenant = newTenant();
    const hub = await created(tenant.api, "/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
    const visit = await tenant.api.post("/visit", { hubId: hub._id, name: "X", coordinate: "-6.2,106.8", priority: 6 });
    expect(refusal(visit)).toEqual({ status: 400, failedCode: "sys-400" });
    expect((await tenant.api.get("/visits")).body.data).toEqual([]);
    expect(visit.body.errors.map((e: { field: string }) => e.field)).toEqual(["priority"]);
    const vehicle = await tenant.api.post("/vehicle", { name: "V", hubId: hub._id, startLocation: { lat: 91, lng: 0 } });
    expect(refusal(vehicle)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(vehicle.body.errors.map((e: { field: string }) => e.field)[0]).toMatch(/^startLocation/);
    expect((await tenant.api.get("/vehicles")).body.data).toEqual([]);
  });
});
