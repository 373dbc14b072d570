import { ALWAYS_ON_SHIFT } from "#test/support/shifts";
import { describe, expect, it } from "vitest";
import { newTenant } from "#test/support/local-api";
import { created, runOnDemand } from "#test/support/on-demand-runs";
import { refusal } from "#test/support/refusals";

/**
 * Pickup-and-delivery pairs end to end through the local gateway: visits paired over HTTP
 * (`pickupVisitId` on the delivery), an on-demand run handed to the run worker, and a stored result
 * that serves each pair on one vehicle, pickup first, or drops both. Invalid pairs are 400s.
 */

const fields = (response: { body: { errors?: Array<{ field: string }> } }) => response.body.errors?.map((e) => e.field);

describe("Pickup-and-delivery pairs through a run", () => {
  it("serves the pickup before its delivery on one vehicle (though the delivery is on the way out) and drops a pair that cannot fit as a whole", async () => {
    const tenant = newTenant();
    const hub = await created(tenant.api, "/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
    await created(tenant.api, "/vehicle", { name: "Van", hubId: hub._id, workingTime: ALWAYS_ON_SHIFT, capacity: { weight: { max: 10 } } });
    // The delivery lies between the hub and the pickup: the shortest tour would pass it first.
    const pickup = await created(tenant.api, "/visit", {
      hubId: hub._id,
      name: "Pickup",
      coordinate: "-6.10,106.8",
      capacity: { weight: 6 },
    });
    const delivery = await created(tenant.api, "/visit", {
      hubId: hub._id,
      name: "Delivery",
      coordinate: "-6.15,106.8",
      pickupVisitId: pickup._id,
    });
    expect(pickup.pickupVisitId).toBeNull();
    expect(delivery.pickupVisitId).toBe(pickup._id);
    const plain = await created(tenant.api, "/visit", {
      hubId: hub._id,
      name: "Plain",
      coordinate: "-6.12,106.81",
      capacity: { weight: 3 },
    });
    // A pickup heavier than the van: it cannot be served, so its delivery is dropped with it.
    const heavy = await created(tenant.api, "/visit", {
      hubId: hub._id,
      name: "Heavy",
      coordinate: "-6.18,106.8",
      capacity: { weight: 20 },
    });
    const heavyDelivery = await created(tenant.api, "/visit", {
      hubId: hub._id,
      name: "Heavy drop",
      coordinate: "-6.19,106.8",
      pickupVisitId: heavy._id,
    });
    const profile = await created(tenant.api, "/routing/configuration", { name: "Plan", hubId: hub._id, timeLimitSeconds: 2 });

    const result = await runOnDemand(tenant.api, profile._id);
    expect(result).toMatchObject({ status: "done", summary: { visitsPlanned: 5, visitsAssigned: 3, visitsDropped: 2 } });
    expect(result.dropped).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ visitId: heavy._id, reason: "exceeds every vehicle's capacity" }),
        // The delivery unloads the pickup's 20: it is checked against the capacity too.
        expect.objectContaining({ visitId: heavyDelivery._id, reason: "exceeds every vehicle's capacity" }),
      ]),
    );
    expect(result.routes).toHaveLength(1);
    const order: string[] = result.routes[0].trips.map((t: { visitId: string }) => t.visitId);
    expect(order).toHaveLength(3);
    expect(order).toContain(plain._id);
    expect(order.indexOf(pickup._id)).toBeLessThan(order.indexOf(delivery._id));
    // The pair's 6 counts as delivered at the delivery: 6 + 3 in all.
    expect(result.routes[0].load).toEqual({ weight: 9, volume: 0 });
  });

  it("rejects invalid pairs with 400 naming pickupVisitId, and keeps a claimed pickup", async () => {
    const tenant = newTenant();
    const hub = await created(tenant.api, "/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
    const other = await created(tenant.api, "/hub", { name: "Other", address: "Jl. Other 1", lat: -6.3, lng: 106.9 });
    const visit = (body: Record<string, unknown>) =>
      tenant.api.post("/visit", { hubId: hub._id, name: "V", coordinate: "-6.2,106.8", ...body });
    const pickup = await created(tenant.api, "/visit", { hubId: hub._id, name: "P", coordinate: "-6.2,106.8" });
    const elsewhere = await created(tenant.api, "/visit", { hubId: other._id, name: "E", coordinate: "-6.3,106.9" });

    const unknown = await visit({ pickupVisitId: "000000000000000000000000" });
    expect(refusal(unknown)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(fields(unknown)).toEqual(["pickupVisitId"]);
    expect(unknown.body.status).toBe(false);
    const otherHub = await visit({ pickupVisitId: elsewhere._id });
    expect(refusal(otherHub)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(otherHub.body.message).toBeTruthy();
    expect(fields(otherHub)).toEqual(["pickupVisitId"]);
    expect((await tenant.api.get("/visits?limit=100")).body.data).toHaveLength(2);

    const delivery = await created(tenant.api, "/visit", {
      hubId: hub._id,
      name: "D",
      coordinate: "-6.2,106.8",
      pickupVisitId: pickup._id,
    });
    // The pickup is taken; a delivery cannot be a pickup; a visit cannot be its own pickup or a pickup and a delivery at once.
    for (const response of [
      await visit({ pickupVisitId: pickup._id }),
      await visit({ pickupVisitId: delivery._id }),
      await tenant.api.patch(`/visit/${delivery._id}`, { pickupVisitId: delivery._id }),
      await tenant.api.patch(`/visit/${pickup._id}`, { pickupVisitId: elsewhere._id }),
    ]) {
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(fields(response)).toEqual(["pickupVisitId"]);
    }
    // A paired pickup stays in its delivery's hub and cannot be deleted while paired.
    const moved = await tenant.api.patch(`/visit/${pickup._id}`, { hubId: other._id });
    expect(refusal(moved)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(fields(moved)).toEqual(["hubId"]);
    expect(refusal(await tenant.api.delete(`/visit/${pickup._id}`))).toEqual({ status: 400, failedCode: "sys-400" });
    expect((await tenant.api.get(`/visit/${pickup._id}`)).body.data.hubId).toBe(hub._id);
    // Unpairing releases the pickup: another delivery may claim it, and it may be deleted once that one is gone.
    const unpaired = await tenant.api.patch(`/visit/${delivery._id}`, { pickupVisitId: null });
    expect(unpaired.status).toBe(200);
    const second = await created(tenant.api, "/visit", { hubId: hub._id, name: "D2", coordinate: "-6.2,106.8", pickupVisitId: pickup._id });
    expect((await tenant.api.delete(`/visit/${second._id}`)).status).toBeLessThan(300);
    expect((await tenant.api.delete(`/visit/${pickup._id}`)).status).toBeLessThan(300);
  });
});
