import { describe, expect, it } from "vitest";
import { newTenant } from "#test/support/local-api";
import { created, runOnDemand } from "#test/support/on-demand-runs";
import { ALWAYS_ON_SHIFT } from "#test/support/shifts";

/**
 * A run keeps to its budget whatever the travel provider does: `silent-osrm` (test/support/global-setup.ts)
 * accepts connections and never answers. Before, three attempts × the 15 s default timeout took 46 s.
 */
describe("Routing runs: budgets that hold", () => {
  it("a 3-second run whose provider never answers gives the matrix up at its deadline and falls back to great circle", async () => {
    const { api } = newTenant();
    const post = (path: string, body: unknown) => created(api, path, body);
    const hub = await post("/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
    await post("/vehicle", { name: "Van", hubId: hub._id, workingTime: ALWAYS_ON_SHIFT });
    for (let i = 0; i < 3; i++) await post("/visit", { hubId: hub._id, name: `V${i}`, coordinate: { lat: -6.21 - 0.01 * i, lng: 106.81 } });
    const profile = await post("/routing/configuration", {
      name: "Silent roads",
      hubId: hub._id,
      timeLimitSeconds: 3,
      travelProvider: "silent-osrm",
      travelFallback: "greatCircle",
    });
    const result = await runOnDemand(api, profile._id);
    expect(result).toMatchObject({
      status: "done",
      summary: { visitsAssigned: 3, travel: { provider: "silent-osrm", source: "greatCircle" } },
    });
    expect(result.summary.travel.fallbackReason).toMatch(/within the run's time budget/);
    // The matrix was given up at its deadline (the budget less the optimizer's second) and not after one 15 s attempt,
    // let alone three: the run's own measure is under one attempt's timeout. Its exact closeness to the deadline is a
    // matter of the shared machine's load (6 s seen at load 4 for a 2 s deadline); the deadline itself is asserted on an
    // injected clock in test/unit/runs/run-worker.test.ts.
    expect(result.summary.travel.matrixSeconds).toBeLessThan(15);
  });
});
