import { afterEach, describe, expect, it } from "vitest";
import { markVisitDispatched } from "#shared/app/visits";
import { recordLiveRoutes } from "#shared/store/live-route-store";
import { apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { resetStrictDynamoDb, strictDynamoDb } from "#test/support/strict-dynamodb";

/**
 * Geofence arrival under production DynamoDB semantics (test/support/strict-dynamodb.ts): reports of
 * one stopped vehicle racing each other (for its POSITION state item) and the driver's own `arrive`
 * (for the visit and the vehicle's current-stop item) arrive the visit once — one history entry —
 * and every report is stored whatever its arrival attempt met.
 */
afterEach(() => {
  resetStrictDynamoDb();
});

const stop = { lat: -6.21, lng: 106.81 };
const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

describe("Geofence arrival under contention", () => {
  it("three concurrent reports at the stop and five driver arrives: one ARRIVED, one history entry, every report 202", async () => {
    const { api, organizationId } = newTenant();
    const hub = (await api.post("/hub", { name: "Depot", address: "Jl. 1", lat: -6.2, lng: 106.8 })).body.data._id as string;
    const vehicle = (
      await api.post("/vehicle", {
        name: "Van",
        hubId: hub,
        assignee: "driver-1",
        workingTime: { startTime: "00:00", endTime: "23:59", multiday: 1 },
      })
    ).body.data._id as string;
    const profile = (await api.post("/routing/configuration", { name: "Plan", hubId: hub, timeLimitSeconds: 1, autoArrival: true })).body
      .data._id as string;
    const visit = (await api.post("/visit", { hubId: hub, name: "Stop", coordinate: stop })).body.data._id as string;
    const now = new Date();
    const dispatch = { assignedVehicleId: vehicle, routingResultId: "r1", routePlannedOrder: 1, eta: null, etd: null };
    expect(
      await markVisitDispatched(organizationId, hub, visit, dispatch, "2026-12-01 08:00:00", {
        source: "dispatcher",
        userId: "dispatcher-1",
        at: "2026-12-01T08:00:00Z",
      }),
    ).toBe(true);
    // The vehicle's live route as a dispatch writes it: this visit, 5 minutes from the depot.
    await recordLiveRoutes(organizationId, [
      {
        vehicleId: vehicle,
        hubId: hub,
        resultId: "r1",
        visitIds: [visit],
        departure: "2026-12-01 08:00",
        timeZone: "UTC",
        dispatchedTime: "2026-12-01 08:00:00",
        plan: {
          configurationId: profile,
          planningDay: now.toISOString().slice(0, 10),
          origin: new Date(now.getTime() - 10 * 60_000).toISOString(),
          departureMinutes: 0,
          returnMinutes: 5,
          firstTrip: 0,
          legs: [5],
          breaks: [],
        },
      },
    ]);

    const driver = apiClient(tokenFor({ organizationId, sub: "driver-1", permissions: ["add/vehicle-position", "edit/visit-progress"] }));
    const semantics = strictDynamoDb();
    semantics.resetCounters();
    // The first five transactions (at least two of them arrives: a report's next write waits behind its
    // first) are gathered at the proxy, so the presses race whatever the machine's load.
    const gathered = semantics.gatherTransactions(5, 30_000);
    const reports = Array.from({ length: 3 }, (_, i) =>
      driver.post(`/vehicle/${vehicle}/positions`, {
        positions: [
          { at: ago(200 - 40 * i), lat: stop.lat + 0.0001, lng: stop.lng, speedKmh: 1 },
          { at: ago(180 - 40 * i), lat: stop.lat, lng: stop.lng + 0.0001, speedKmh: 0 },
        ],
      }),
    );
    // The driver's app presses arrive on five devices at once (no Idempotency-Key).
    const arrives = Array.from({ length: 5 }, () => driver.post(`/visit/${visit}/progress`, { action: "arrive" }));
    const answers = await Promise.all([...reports, ...arrives]);
    expect(await gathered).toBe(5);
    for (const answer of answers.slice(0, 3)) expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    const arrived = answers.slice(3);
    for (const answer of arrived) expect([200, 409], JSON.stringify(answer.body)).toContain(answer.status);
    const counters = semantics.counters();
    expect(counters.transactionConflicts + counters.singleWriteConflicts).toBeGreaterThan(0);

    const stored = (await api.get(`/visit/${visit}`)).body.data;
    expect(stored.status).toBe("ARRIVED");
    const history = (await api.get(`/visit/${visit}/history`)).body.data as Array<{ to: string; source: string }>;
    expect(history.map((entry) => entry.to)).toEqual(["ARRIVED"]);
    expect(["driver", "geofence"]).toContain(history[0]?.source);
    // One driver's arrive answered 200 exactly when it was the one recorded.
    expect(arrived.filter((answer) => answer.status === 200)).toHaveLength(history[0]?.source === "driver" ? 1 : 0);
    const track = (await api.get(`/vehicle/${vehicle}/positions?limit=100`)).body.data;
    expect(track).toHaveLength(6);
  });
});
