import { describe, expect, it } from "vitest";
import { apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { created, deliverRuns } from "#test/support/on-demand-runs";
import { refusal } from "#test/support/refusals";
import { ALWAYS_ON_SHIFT } from "#test/support/shifts";

/**
 * A live day through the local gateway and the real stores: dispatch, then POST
 * /routing/result/{id}/reoptimize plans around what is on the road, and dispatching the re-plan keeps
 * the dispatched visits on their vehicle.
 */

/** One 100 kg van, `count` visits of 10 kg each. */
async function liveDay(count: number) {
  const tenant = newTenant();
  const hub = await created(tenant.api, "/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
  const van = await created(tenant.api, "/vehicle", {
    name: "Van",
    hubId: hub._id,
    workingTime: ALWAYS_ON_SHIFT,
    capacity: { weight: { max: 100 } },
  });
  const addVisits = async (n: number, prefix: string, extra: Record<string, unknown> = {}) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++)
      ids.push(
        (
          await created(tenant.api, "/visit", {
            hubId: hub._id,
            name: `${prefix}${i}`,
            coordinate: `${-6.2 + 0.003 * (i + 1)},106.8${i}`,
            capacity: { weight: 10 },
            ...extra,
          })
        )._id,
      );
    return ids;
  };
  const morning = await addVisits(count, "m");
  const profile = await created(tenant.api, "/routing/configuration", {
    name: "Plan",
    hubId: hub._id,
    timeLimitSeconds: 1,
    capacityConstraint: { weight: true, volume: false },
  });
  const first = await created(tenant.api, "/routing/result", { configurationId: profile._id });
  await deliverRuns([first._id]);
  const dispatched = await tenant.api.post(`/routing/result/${first._id}/dispatch`, undefined);
  expect(dispatched.body.data).toMatchObject({ success: count, failed: 0 });
  return { ...tenant, hub, van, morning, first, addVisits };
}

describe("POST /routing/result/{resultId}/reoptimize", () => {
  it("re-plans a dispatched day: 8 × 10 kg on a 100 kg van, 5 more added → at most 2 of them join it, the 8 stay", async () => {
    const day = await liveDay(8);
    const added = await day.addVisits(5, "n");
    const response = await day.api.post(`/routing/result/${day.first._id}/reoptimize`, {});
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data).toMatchObject({
      createdFrom: "REOPTIMIZE",
      parentResultId: day.first._id,
      status: "ongoing",
      hubId: day.hub._id,
    });
    const replan = response.body.data._id as string;

    // One per hub at a time.
    const again = await day.api.post(`/routing/result/${day.first._id}/reoptimize`, {});
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ failedCode: "reopt-409", resultId: replan });
    const hubResults = (await day.api.get(`/routing/results?hubId=${day.hub._id}`)).body.data.map((r: { _id: string }) => r._id);
    expect(hubResults.sort()).toEqual([day.first._id, replan].sort());

    await deliverRuns([replan]);
    const result = (await day.api.get(`/routing/result/${replan}`)).body.data;
    expect(result.status).toBe("done");
    const trips = result.routes.flatMap((route: { trips: Array<{ visitId: string; pinnedFromResultId?: string }> }) => route.trips);
    expect(trips.filter((trip: { pinnedFromResultId?: string }) => trip.pinnedFromResultId === day.first._id)).toHaveLength(8);

    expect((await day.api.post(`/routing/result/${replan}/dispatch`, undefined)).status).toBe(200);
    const visits = await Promise.all([...day.morning, ...added].map(async (id) => (await day.api.get(`/visit/${id}`)).body.data));
    const onVan = visits.filter((v) => v.status === "ASSIGNED" && v.assignedVehicleId === day.van._id);
    expect(onVan.filter((v) => day.morning.includes(v._id))).toHaveLength(8);
    expect(onVan.filter((v) => added.includes(v._id)).length).toBeLessThanOrEqual(2);
    for (const visit of onVan) expect(visit.routingResultId).toBe(replan);

    // The lock is free again once the run is over.
    const next = await day.api.post(`/routing/result/${replan}/reoptimize`, {});
    expect(next.status).toBe(201);
    await deliverRuns([next.body.data._id]);
  });

  it("400 on a bad body (nothing created), 404 for another organization, 401 without a token, 403 without the slug, 409 on an undispatched result", async () => {
    const day = await liveDay(2);
    const results = async () => (await day.api.get(`/routing/results?hubId=${day.hub._id}`)).body.data;
    const before = await results();
    expect(before).toHaveLength(1);
    const bad = await day.api.post(`/routing/result/${day.first._id}/reoptimize`, { assigned: "teleport", extra: 1 });
    expect(refusal(bad)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(bad.body.errors.map((error: { field: string }) => error.field)).toEqual(expect.arrayContaining(["assigned", "extra"]));
    expect(refusal(await newTenant().api.post(`/routing/result/${day.first._id}/reoptimize`, {}))).toEqual({
      status: 404,
      failedCode: "sys-404",
    });
    expect(refusal(await apiClient(undefined).post(`/routing/result/${day.first._id}/reoptimize`, {}))).toEqual({
      status: 401,
      failedCode: "sys-401",
    });
    const noSlug = apiClient(tokenFor({ organizationId: day.organizationId, permissions: ["view/routing-result"] }));
    expect(refusal(await noSlug.post(`/routing/result/${day.first._id}/reoptimize`, {}))).toEqual({ status: 403, failedCode: "sys-035" });
    // None of the refusals created a result or changed the dispatched one.
    expect(await results()).toEqual(before);
    const ongoing = await created(day.api, "/routing/result", { configurationId: day.first.configurationId });
    const refused = await day.api.post(`/routing/result/${ongoing._id}/reoptimize`, {});
    expect(refused.status).toBe(409);
    expect(refused.body.failedCode).toBe("sys-409");
    expect((await results()).map((r: { _id: string }) => r._id).sort()).toEqual([day.first._id, ongoing._id].sort());
    await deliverRuns([ongoing._id]);
  });

  type Trip = { visitId: string; pinnedFromResultId?: string; releasedFromResultId?: string };
  type Route = { vehicleId: string; distanceMeters: number; trips: Trip[] };

  async function replanOf(day: Awaited<ReturnType<typeof liveDay>>, body: Record<string, unknown>) {
    const response = await day.api.post(`/routing/result/${day.first._id}/reoptimize`, body);
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    await deliverRuns([response.body.data._id]);
    const result = (await day.api.get(`/routing/result/${response.body.data._id}`)).body.data;
    expect(result.status, JSON.stringify(result.message)).toBe("done");
    return result;
  }

  it("declares its defaults: the stored options of a bare body are keepVehicle, new visits and idle vehicles in, no auto-dispatch", async () => {
    const day = await liveDay(3);
    const result = await replanOf(day, {});
    expect(result.reoptimize).toEqual({
      assigned: "keepVehicle",
      releaseVehicleIds: [],
      includeNewVisits: true,
      useIdleVehicles: true,
      autoDispatch: false,
    });
    expect(result.dispatch).toBeNull();
    // Nothing changed on the road: the warm start keeps every route at most as long as the parent's.
    const parent = (await day.api.get(`/routing/result/${day.first._id}`)).body.data;
    for (const route of result.routes as Route[]) {
      const before = (parent.routes as Route[]).find((candidate) => candidate.vehicleId === route.vehicleId);
      expect(before).toBeDefined();
      expect(route.distanceMeters).toBeLessThanOrEqual(before!.distanceMeters);
      expect(route.trips.map((trip) => trip.visitId).sort()).toEqual(before!.trips.map((trip) => trip.visitId).sort());
    }
    for (const bad of [{ timeLimitSeconds: 241 }, { timeLimitSeconds: 0 }, { releaseVehicleIds: ["a", "a"] }, { useIdleVehicles: "yes" }]) {
      const refused = await day.api.post(`/routing/result/${day.first._id}/reoptimize`, bad);
      expect(refused.status, JSON.stringify(bad)).toBe(400);
    }
  });

  it("includeNewVisits false plans only the parent's visits; autoDispatch dispatches the re-plan when its run is done", async () => {
    const day = await liveDay(4);
    const added = await day.addVisits(2, "n");
    const result = await replanOf(day, { includeNewVisits: false, autoDispatch: true, timeLimitSeconds: 2 });
    expect(result.reoptimize).toMatchObject({ includeNewVisits: false, autoDispatch: true, timeLimitSeconds: 2 });
    const planned = [
      ...(result.routes as Route[]).flatMap((route) => route.trips.map((trip) => trip.visitId)),
      ...result.dropped.map((d: Trip) => d.visitId),
    ];
    expect(planned.sort()).toEqual([...day.morning].sort());
    expect(result.dispatch).toMatchObject({ success: 4, failed: 0 });
    for (const id of day.morning)
      expect((await day.api.get(`/visit/${id}`)).body.data).toMatchObject({ status: "ASSIGNED", routingResultId: result._id });
    for (const id of added) expect((await day.api.get(`/visit/${id}`)).body.data.status).toBe("UNASSIGNED");
  });

  it("releaseVehicleIds puts the van's visits back in the pool: dispatch re-assigns the ones planned and returns the dropped ones to UNASSIGNED with a history entry", async () => {
    const day = await liveDay(8);
    // Five urgent 10 kg visits: the 100 kg van takes them first, so 3 of the released morning visits no longer fit.
    const urgent = await day.addVisits(5, "u", { priority: 5 });
    const result = await replanOf(day, { releaseVehicleIds: [day.van._id] });
    const trips = (result.routes as Route[]).flatMap((route) => route.trips);
    expect(trips.some((trip) => trip.pinnedFromResultId !== undefined)).toBe(false);
    expect(trips.filter((trip) => day.morning.includes(trip.visitId)).every((trip) => trip.releasedFromResultId === day.first._id)).toBe(
      true,
    );
    expect(trips.filter((trip) => urgent.includes(trip.visitId))).toHaveLength(5);
    const dropped = result.dropped as Trip[];
    expect(dropped).toHaveLength(3);
    for (const entry of dropped) expect(entry.releasedFromResultId).toBe(day.first._id);

    const dispatch = await day.api.post(`/routing/result/${result._id}/dispatch`, undefined);
    expect(dispatch.status).toBe(200);
    expect(dispatch.body.data).toMatchObject({ success: 10, failed: 0, unassigned: 3 });
    for (const entry of dropped) {
      const visit = (await day.api.get(`/visit/${entry.visitId}`)).body.data;
      expect(visit).toMatchObject({ status: "UNASSIGNED", assignedVehicleId: null, routingResultId: null, eta: null });
      expect(visit.lastTransition).toMatchObject({ from: "ASSIGNED", to: "UNASSIGNED", source: "system" });
      const history = (await day.api.get(`/visit/${entry.visitId}/history`)).body.data;
      expect(history.at(-1)).toMatchObject({ from: "ASSIGNED", to: "UNASSIGNED", source: "system", version: visit.lastTransition.version });
    }
    // Back in the pool: the next run collects them again.
    const listed = (await day.api.get(`/visits?hubId=${day.hub._id}&status=UNASSIGNED`)).body.data.map((v: { _id: string }) => v._id);
    for (const entry of dropped) expect(listed).toContain(entry.visitId);
    // A second dispatch changes nothing more: they are no longer under the parent.
    expect((await day.api.post(`/routing/result/${result._id}/dispatch`, undefined)).body.data.unassigned).toBeUndefined();
  });

  it("assigned free releases the visits of a vehicle still at the hub (nothing of its route started)", async () => {
    const day = await liveDay(3);
    const result = await replanOf(day, { assigned: "free" });
    const trips = (result.routes as Route[]).flatMap((route) => route.trips);
    expect(trips).toHaveLength(3);
    for (const trip of trips) {
      expect(trip.pinnedFromResultId).toBeUndefined();
      expect(trip.releasedFromResultId).toBe(day.first._id);
    }
  });

  it("useIdleVehicles: a van with no route today takes the overflow by default, and none with false", async () => {
    const day = await liveDay(8);
    await day.addVisits(5, "u", { priority: 5 });
    const spare = await created(day.api, "/vehicle", {
      name: "Spare",
      hubId: day.hub._id,
      workingTime: ALWAYS_ON_SHIFT,
      capacity: { weight: { max: 100 } },
    });
    const idleOut = await replanOf(day, { useIdleVehicles: false });
    expect((idleOut.routes as Route[]).map((route) => route.vehicleId)).toEqual([day.van._id]);
    expect(idleOut.dropped).toHaveLength(3);
    const idleIn = await replanOf(day, {});
    expect((idleIn.routes as Route[]).some((route) => route.vehicleId === spare._id)).toBe(true);
    expect(idleIn.dropped).toHaveLength(0);
  });
});
