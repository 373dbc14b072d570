import { describe, expect, it } from "vitest";
import { changeTenantPlan, enrollTenant, type TenantOperations } from "#shared/app/tenants";
import { configuredPlans } from "#shared/config/tenant-plans";
import type { Location } from "#shared/routing/model";
import { travelElementsUsed } from "#shared/store/usage-store";
import { localApiKeys } from "#shared/tenancy/local-api-keys";
import { type ApiClient, apiClient, newOrganizationId, tokenFor } from "#test/support/local-api";
import { created, runOnDemand } from "#test/support/on-demand-runs";
import { ALWAYS_ON_SHIFT } from "#test/support/shifts";

/**
 * Road-engine spend per plan through the local gateway: which providers a plan may use (checked when a
 * profile names one and again when a run starts) and the monthly dollar cap per provider. The suite's
 * stack declares `priced-osrm` at $20 per 1,000 elements and the test plans of test/support/test-plans.ts
 * (`test-city-roads`: fake-osrm only; `test-no-roads`: great circle only; `test-road-dollars`: $1 of priced-osrm).
 */
const operations = (): TenantOperations => ({ plans: configuredPlans(), apiKeys: localApiKeys });

async function enrolled(plan: string) {
  const organizationId = newOrganizationId();
  await enrollTenant(organizationId, plan, operations());
  return { organizationId, api: apiClient(tokenFor({ organizationId, sub: "user-1" })) };
}

const DEPOT: Location = { lat: -6.2, lng: 106.8 };
const spot = (i: number): Location => ({ lat: -6.21 + 0.004 * i, lng: 106.81 + 0.003 * i });

async function hubWithVisits(api: ApiClient, count: number) {
  const hub = await created(api, "/hub", { name: "Depot", address: "Jl. Depot 1", ...DEPOT });
  await created(api, "/vehicle", { name: "Van", hubId: hub._id, workingTime: ALWAYS_ON_SHIFT });
  for (let i = 0; i < count; i++) await created(api, "/visit", { hubId: hub._id, name: `V${i}`, coordinate: spot(i), visitTime: 5 });
  return hub;
}

describe("Road-engine spend per plan", () => {
  it("refuses a profile naming a provider the plan does not include with 400 naming the allowed ones, on create and on update, storing nothing", async () => {
    const { api } = await enrolled("test-city-roads");
    const hub = await created(api, "/hub", { name: "Depot", address: "Jl. Depot 1", ...DEPOT });
    const allowedMessage =
      "travelProvider: plan test-city-roads does not include the travel provider priced-osrm; it allows: greatCircle, fake-osrm";

    const refused = await api.post("/routing/configuration", { name: "X", hubId: hub._id, travelProvider: "priced-osrm" });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      status: false,
      failedCode: "sys-400",
      errors: [{ field: "travelProvider", message: allowedMessage }],
    });
    expect((await api.get(`/routing/configurations?hubId=${hub._id}`)).body.data).toHaveLength(0);

    const profile = await created(api, "/routing/configuration", { name: "Roads", hubId: hub._id, travelProvider: "fake-osrm" });
    const patched = await api.patch(`/routing/configuration/${profile._id}`, { travelProvider: "priced-osrm" });
    expect(patched.status).toBe(400);
    expect(patched.body).toMatchObject({
      status: false,
      failedCode: "sys-400",
      errors: [{ field: "travelProvider", message: allowedMessage }],
    });
    expect((await api.get(`/routing/configuration/${profile._id}`)).body.data).toMatchObject({ travelProvider: "fake-osrm" });
  });

  it("fails a run whose plan no longer includes its profile's provider, naming the allowed ones, whatever the profile's fallback", async () => {
    const { organizationId, api } = await enrolled("test-city-roads");
    const hub = await hubWithVisits(api, 2);
    const strict = await created(api, "/routing/configuration", { name: "Strict", hubId: hub._id, travelProvider: "fake-osrm" });
    const lenient = await created(api, "/routing/configuration", {
      name: "Lenient",
      hubId: hub._id,
      travelProvider: "fake-osrm",
      travelFallback: "greatCircle",
    });
    await changeTenantPlan(organizationId, "test-no-roads", operations());

    for (const profile of [strict, lenient]) {
      const failed = await runOnDemand(api, profile._id);
      expect(failed.status).toBe("failed");
      expect(failed.message).toMatch(
        /^Travel provider fake-osrm: plan test-no-roads does not include the travel provider fake-osrm; it allows: greatCircle\./,
      );
    }
    expect(await travelElementsUsed(organizationId, new Date().toISOString().slice(0, 7))).toBe(0);
  });

  it("stops a run at the plan's $1 of a provider before asking it, failing or falling back as the profile says", async () => {
    const { organizationId, api } = await enrolled("test-road-dollars");
    const hub = await hubWithVisits(api, 5);
    const strict = await created(api, "/routing/configuration", {
      name: "Strict",
      hubId: hub._id,
      // Room for the matrix on a busy machine (it gets the budget less the optimizer's second; a few visits end the search early).
      timeLimitSeconds: 15,
      travelProvider: "priced-osrm",
    });
    // 6 points: 36 elements, $0.72 of the $1 (50 elements at $20 per 1,000).
    const first = await runOnDemand(api, strict._id);
    expect(first).toMatchObject({ status: "done", summary: { travel: { source: "osrm", elementsRequested: 36 } } });
    // The route lines are asked of the same engine and charged on the same caps (one element per leg).
    const month = new Date().toISOString().slice(0, 7);
    const used = 36 + first.summary.travel.geometry.elementsRequested;
    expect(await travelElementsUsed(organizationId, month)).toBe(used);
    expect(used).toBeLessThanOrEqual(50);

    // Two more visits: 8² − 6² = 28 new elements: past the cap, so nothing is asked.
    for (const i of [5, 6]) await created(api, "/visit", { hubId: hub._id, name: `V${i}`, coordinate: spot(i), visitTime: 5 });
    const failed = await runOnDemand(api, strict._id);
    expect(failed.status).toBe("failed");
    const dollars = ((used * 20) / 1000).toFixed(2);
    expect(failed.message).toContain(
      `Travel provider priced-osrm: Monthly spend cap reached for the travel provider priced-osrm: plan test-road-dollars allows $1.00 per month at $20.00 per 1,000 elements (50 elements); ${used} are used in ${month} ($${dollars}) and this run needs 28 more.`,
    );

    const lenient = await created(api, "/routing/configuration", {
      name: "Lenient",
      hubId: hub._id,
      // Room for the matrix on a busy machine (it gets the budget less the optimizer's second; a few visits end the search early).
      timeLimitSeconds: 15,
      travelProvider: "priced-osrm",
      travelFallback: "greatCircle",
    });
    const fellBack = await runOnDemand(api, lenient._id);
    expect(fellBack).toMatchObject({
      status: "done",
      summary: { visitsAssigned: 7, travel: { provider: "priced-osrm", source: "greatCircle", elementsRequested: 0 } },
    });
    expect(fellBack.summary.travel.fallbackReason).toMatch(/^Monthly spend cap reached for the travel provider priced-osrm/);
    // Refused reservations hold nothing: the month counts the first run's elements only.
    expect(await travelElementsUsed(organizationId, month)).toBe(used);
  });
});
