import { describe, expect, it } from "vitest";
import { planCatalog } from "#shared/domain/tenants/plan-catalog";
import type { Plan } from "#shared/domain/tenants/plans";
import { parseTravelProviders } from "#shared/domain/travel/providers";
import { allowedTravelProviders, dollarCapElements, travelProviderRefusal } from "#shared/domain/travel/spend";

const plan = (extra: Partial<Plan> = {}): Plan => ({ name: "p", description: "", rate: 1, burst: 1, maxRunsQueued: 1, ...extra });
const declared = ["greatCircle", "city", "amazon"];
const providers = parseTravelProviders({
  providers: {
    city: { kind: "osrm", url: "http://osrm.internal" },
    amazon: { kind: "amazonLocation", pricePer1000Elements: 0.5 },
  },
}).providers;

describe("travel providers per plan", () => {
  it("allows every declared provider when the plan names none, and great circle always", () => {
    expect(allowedTravelProviders(plan(), declared)).toEqual(declared);
    expect(allowedTravelProviders(plan({ travelProviders: ["city", "gone"] }), declared)).toEqual(["greatCircle", "city"]);
    expect(allowedTravelProviders(plan({ travelProviders: [] }), declared)).toEqual(["greatCircle"]);
  });

  it("refuses a provider the plan does not list, naming the ones it allows", () => {
    expect(travelProviderRefusal(plan({ travelProviders: ["city"] }), declared, "city")).toBeUndefined();
    expect(travelProviderRefusal(plan({ travelProviders: ["city"] }), declared, "amazon")).toBe(
      "plan p does not include the travel provider amazon; it allows: greatCircle, city",
    );
  });

  it("turns a dollar cap into elements at the declared price, rounding down; no price or no cap: none", () => {
    expect(dollarCapElements(plan({ travelDollarsPerMonth: { amazon: 500 } }), "amazon", providers.amazon!)).toEqual({
      dollars: 500,
      pricePer1000: 0.5,
      elements: 1_000_000,
    });
    expect(dollarCapElements(plan({ travelDollarsPerMonth: { amazon: 0.0013 } }), "amazon", providers.amazon!)?.elements).toBe(2);
    expect(dollarCapElements(plan({ travelDollarsPerMonth: { city: 5 } }), "city", providers.city!)).toBeUndefined();
    expect(dollarCapElements(plan(), "amazon", providers.amazon!)).toBeUndefined();
  });

  it("reads both from the operator's plans document and refuses a malformed provider name", () => {
    const catalog = planCatalog({
      plans: [{ name: "lean", rate: 1, burst: 1, maxRunsQueued: 1, travelProviders: ["city"], travelDollarsPerMonth: { amazon: 50 } }],
    });
    expect(catalog.named("lean")).toMatchObject({ travelProviders: ["city"], travelDollarsPerMonth: { amazon: 50 } });
    expect(() => planCatalog({ plans: [{ name: "bad", rate: 1, burst: 1, maxRunsQueued: 1, travelProviders: ["no spaces"] }] })).toThrow(
      /plans\.0\.travelProviders\.0/,
    );
  });
});
