import { afterEach, describe, expect, it } from "vitest";
import { markVisitDispatched } from "#shared/app/visits";
import { apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { resetStrictDynamoDb } from "#test/support/strict-dynamodb";

/**
 * Under production DynamoDB semantics (transaction conflicts, test/support/strict-dynamodb.ts): of
 * concurrent `complete` calls on one visit, exactly one changes it; the others are replays (same
 * Idempotency-Key) or 409s, and the history holds one entry.
 */
afterEach(() => {
  resetStrictDynamoDb();
});

describe("POST /visit/{visitId}/progress under contention", () => {
  it("20 concurrent completes: one 200, the rest replays or 409, one history entry", async () => {
    const { api, organizationId } = newTenant();
    const hub = (await api.post("/hub", { name: "Depot", address: "Jl. 1", lat: -6.2, lng: 106.8 })).body.data._id;
    const vehicle = (
      await api.post("/vehicle", {
        name: "Van",
        hubId: hub,
        assignee: "driver-1",
        workingTime: { startTime: "00:00", endTime: "23:59", multiday: 0 },
      })
    ).body.data._id;
    const visit = (await api.post("/visit", { hubId: hub, name: "Stop", coordinate: { lat: -6.21, lng: 106.81 } })).body.data._id;
    const dispatch = {
      assignedVehicleId: vehicle,
      routingResultId: "r1",
      routePlannedOrder: 1,
      eta: "2026-12-01 09:10",
      etd: "2026-12-01 09:25",
    };
    expect(
      await markVisitDispatched(organizationId, hub, visit, dispatch, "2026-12-01 08:00:00", {
        source: "dispatcher",
        userId: "dispatcher-1",
        at: "2026-12-01T08:00:00Z",
      }),
    ).toBe(true);
    await api.post(`/visit/${visit}/progress`, { action: "start" });

    const driver = apiClient(tokenFor({ organizationId, sub: "driver-1", permissions: ["edit/visit-progress"] }));
    const at = new Date().toISOString();
    // The first two calls' transactions are gathered at the proxy, so at least two calls race
    // whatever the machine's load (a busy one could serve the 20 one after another, and each later
    // call would then just read the visit DONE).
    const semantics = resetStrictDynamoDb();
    const gathered = semantics.gatherTransactions(2, 30_000);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        driver.request("POST", `/visit/${visit}/progress`, {
          body: { action: "complete", at },
          headers: i % 2 === 0 ? { "idempotency-key": "complete-once" } : {},
        }),
      ),
    );
    expect(await gathered).toBe(2);
    expect(semantics.counters().transactionConflicts).toBeGreaterThanOrEqual(1);
    const fresh = responses.filter((r) => r.status === 200 && r.headers.get("idempotency-replayed") !== "true");
    const replays = responses.filter((r) => r.status === 200 && r.headers.get("idempotency-replayed") === "true");
    const conflicts = responses.filter((r) => r.status === 409);
    expect(fresh).toHaveLength(1);
    expect(replays.length + conflicts.length).toBe(19);
    for (const conflict of conflicts) expect(["visit-409", "sys-410", "idem-409"]).toContain(conflict.body.failedCode);
    const history = (await api.get(`/visit/${visit}/history`)).body.data;
    expect(history.map((t: { to: string }) => t.to)).toEqual(["EN_ROUTE", "DONE"]);
  });
});
