import { expect } from "vitest";
import { newTenant } from "#test/support/local-api";
import { created, deliverRuns } from "#test/support/on-demand-runs";
import { ALWAYS_ON_SHIFT } from "#test/support/shifts";

/**
 * A day planned through the local gateway and the real stores, not yet dispatched: one van driven by
 * driver-1, not returning (so the near visit comes first); a visit 1.7 km from the depot and two about
 * 15 km further; the run handed to the run worker and done. The live-route and result-map tests start here.
 */
export async function plannedDay() {
  const tenant = newTenant({ sub: "dispatcher-1" });
  const { api } = tenant;
  const hub = await created(api, "/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
  const van = await created(api, "/vehicle", { name: "Van", hubId: hub._id, assignee: "driver-1", workingTime: ALWAYS_ON_SHIFT });
  for (const [name, coordinate] of [
    ["near", "-6.215,106.8"],
    ["far-1", "-6.35,106.8"],
    ["far-2", "-6.355,106.81"],
  ])
    await created(api, "/visit", { hubId: hub._id, name, coordinate });
  const profile = await created(api, "/routing/configuration", { name: "Plan", hubId: hub._id, timeLimitSeconds: 1, returnToHub: false });
  const run = await created(api, "/routing/result", { configurationId: profile._id });
  await deliverRuns([run._id]);
  const result = (await api.get(`/routing/result/${run._id}`)).body.data;
  expect(result.status).toBe("done");
  const trips = result.routes[0].trips as Array<{ visitId: string; eta: string; etd: string; travelMinutes: number }>;
  return { ...tenant, hub, van, run, result, trips };
}
