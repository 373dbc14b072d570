import { describe, expect, it } from "vitest";
import { planNamed, type Plan } from "#shared/domain/tenants/plans";
import { planCatalog } from "#shared/domain/tenants/plan-catalog";
import { planOf, runQuotaRefusal, runQuotaResetsAt, travelElementsRefusal } from "#shared/domain/usage/run-quota";
import { buildUsageReport, daysOf, usageQuerySchema } from "#shared/domain/usage/schema";

describe("Domain: usage", () => {
  describe("Schema: usage query", () => {
    it.each([
      ["2026-01-01", "2026-01-01", true],
      ["2024-01-01", "2024-12-31", true],
      ["2025-01-01", "2026-01-01", true],
      ["2025-01-01", "2026-01-02", false],
      ["2026-01-02", "2026-01-01", false],
      ["2026-02-29", "2026-03-01", false],
      ["2026-1-01", "2026-01-02", false],
      ["", "2026-01-02", false],
    ])("from %s to %s → valid %s", (from, to, valid) => {
      // Act
      const parsed = usageQuerySchema.safeParse({ from, to });
      // Assess
      expect(parsed.success).toBe(valid);
    });

    it("lists every day of a range across month and year ends", () => {
      expect(daysOf("2025-12-30", "2026-01-02")).toEqual(["2025-12-30", "2025-12-31", "2026-01-01", "2026-01-02"]);
    });
  });

  describe("Function: buildUsageReport", () => {
    it("sums runs and webhook attempts per day and in total, fills days without usage with zeros, and leaves calls null when the usage plan counts them", () => {
      const runs = [
        { day: "2026-03-01", optimizerSeconds: 1.25 },
        { day: "2026-03-01", optimizerSeconds: 0.5, travelElements: 12_100 },
        { day: "2026-03-03", optimizerSeconds: 2, travelElements: 2_100 },
      ];
      const attempts = new Map([
        ["2026-03-02", 3],
        ["2026-03-03", 8],
        ["2026-03-04", 100],
      ]);
      const local = buildUsageReport(
        "o",
        { from: "2026-03-01", to: "2026-03-03" },
        "local-gateway",
        new Map([["2026-03-02", 4]]),
        runs,
        attempts,
      );
      expect(local.days).toEqual([
        { day: "2026-03-01", calls: 0, runs: { count: 2, seconds: 1.75, travelElements: 12_100 }, webhookAttempts: 0 },
        { day: "2026-03-02", calls: 4, runs: { count: 0, seconds: 0, travelElements: 0 }, webhookAttempts: 3 },
        { day: "2026-03-03", calls: 0, runs: { count: 1, seconds: 2, travelElements: 2_100 }, webhookAttempts: 8 },
      ]);
      expect(local.totals).toEqual({ calls: 4, runs: { count: 3, seconds: 3.75, travelElements: 14_200 }, webhookAttempts: 11 });
      const aws = buildUsageReport("o", { from: "2026-03-01", to: "2026-03-01" }, "usage-plan", undefined, runs);
      expect(aws.days[0]?.calls).toBeNull();
      expect(aws.totals.calls).toBeNull();
    });
  });

  describe("Function: runQuotaRefusal", () => {
    const free = planNamed("free") as Plan;
    const now = new Date("2026-12-31T23:00:00Z");

    it.each([
      [0, 60, false],
      [3540, 60, false],
      [3540.5, 60, true],
      [3600, 1, true],
    ])("used %s s + budget %s s of 3,600 → refused %s", (usedSeconds, budget, refused) => {
      expect(runQuotaRefusal({ plan: free, usedSeconds }, budget, now) !== undefined).toBe(refused);
    });

    it("names the plan, the quota, the month and when it resets (next UTC month)", () => {
      const message = runQuotaRefusal({ plan: free, usedSeconds: 3600 }, 10, now);
      expect(message).toContain("plan free allows 3600 optimizer seconds per month, 3600 are used in 2026-12");
      expect(message).toContain("resets at 2027-01-01T00:00:00.000Z");
      expect(runQuotaResetsAt(new Date("2026-02-10T05:00:00Z")).toISOString()).toBe("2026-03-01T00:00:00.000Z");
    });

    it("a plan without runSecondsPerMonth never refuses; an unknown or absent plan is the default plan", () => {
      expect(runQuotaRefusal({ plan: { ...free, runSecondsPerMonth: undefined }, usedSeconds: 1e9 }, 60, now)).toBeUndefined();
      const product = planCatalog();
      expect(planOf(undefined, product).name).toBe("standard");
      expect(planOf("no-such-plan", product).name).toBe("standard");
      expect(planOf("free", product)).toBe(free);
    });

    it("reads the operator's plans: an operator plan binds, and the operator's default plan is the fallback", () => {
      const tiny = { name: "tiny", description: "", rate: 5, burst: 5, runSecondsPerMonth: 3, maxRunsQueued: 1 };
      const operator = planCatalog({ defaultPlan: "tiny", plans: [tiny] });
      expect(planOf("tiny", operator)).toMatchObject({ runSecondsPerMonth: 3, maxRunsQueued: 1 });
      expect(planOf(undefined, operator).name).toBe("tiny");
      expect(planOf("free", operator)).toBe(free);
    });
  });

  describe("Function: travelElementsRefusal", () => {
    it("refuses road-matrix elements past the plan's monthly cap, saying how many are used and when it resets; no cap, no refusal", () => {
      const now = new Date("2026-03-15T10:00:00Z");
      const free = planOf("free", planCatalog());
      expect(free.travelElementsPerMonth).toBe(1_000_000);
      expect(travelElementsRefusal(free, 990_000, 10_000, now)).toBeUndefined();
      expect(travelElementsRefusal(free, 990_000, 10_001, now)).toBe(
        "Monthly travel-elements cap reached: plan free allows 1000000 road-matrix elements per month, 990000 are used in 2026-03 and this run needs 10001 more. The cap resets at 2026-04-01T00:00:00.000Z.",
      );
      expect(travelElementsRefusal(planOf("enterprise", planCatalog()), 1e12, 1e9, now)).toBeUndefined();
    });
  });
});
