import { describe, expect, it } from "vitest";
import { tenantAccess } from "#shared/domain/tenants/access";
import { planCatalog, quotaExceededMessage, quotaResetsAt } from "#shared/domain/tenants/plan-catalog";
import type { Tenant } from "#shared/domain/tenants/plans";
import { authorizerContextOf, callerFromAuthorizerContext } from "#shared/http/authorizer-context";

const tenant = (change: Partial<Tenant> = {}): Tenant => ({
  organizationId: "org-1",
  plan: "free",
  status: "active",
  apiKeyValue: "key-1",
  createdTime: "2026-01-01T00:00:00.000Z",
  updatedTime: "2026-01-01T00:00:00.000Z",
  ...change,
});

describe("Module: plan catalog", () => {
  it("holds the product plans, standard by default, and lets an operator add and replace plans", () => {
    expect(planCatalog().plans.map((plan) => plan.name)).toEqual(["free", "standard", "enterprise"]);
    expect(planCatalog().defaultPlan.name).toBe("standard");
    const catalog = planCatalog({
      defaultPlan: "gold",
      plans: [
        { name: "gold", rate: 1, burst: 2, maxRunsQueued: 1 },
        { name: "free", rate: 2, burst: 4, maxRunsQueued: 1 },
      ],
    });
    expect(catalog.defaultPlan.name).toBe("gold");
    expect(catalog.named("free")?.rate).toBe(2);
  });

  it.each([
    [{ plans: [{ name: "Bad Name", rate: 1, burst: 1, maxRunsQueued: 1 }] }, /plans.0.name/],
    [{ plans: [{ name: "x", rate: 0, burst: 1, maxRunsQueued: 1 }] }, /plans.0.rate/],
    [{ plans: [{ name: "x", rate: 1, burst: 1, maxRunsQueued: 1, callQuota: { limit: 5, period: "week" } }] }, /callQuota.period/],
    [{ defaultPlan: "nope" }, /default plan "nope"/],
    [{ plan: [] }, /document/],
  ])("refuses a malformed plan document %#, naming the problem", (document, problem) => {
    expect(() => planCatalog(document)).toThrow(problem);
  });

  it("resets a daily quota at the next UTC midnight and a monthly one on the 1st of the next month", () => {
    const now = new Date("2026-12-31T23:59:59Z");
    expect(quotaResetsAt("day", now).toISOString()).toBe("2027-01-01T00:00:00.000Z");
    expect(quotaResetsAt("month", new Date("2026-11-24T08:00:00Z")).toISOString()).toBe("2026-12-01T00:00:00.000Z");
  });

  it("says which quota is used up and when it resets, with no character that would break the gateway's JSON", () => {
    for (const plan of planCatalog().plans) {
      const message = quotaExceededMessage(plan);
      expect(message).not.toMatch(/["\\]/);
    }
    expect(quotaExceededMessage(planCatalog().named("free")!)).toBe(
      "The daily call quota of plan free (5000 calls per day) is used up; it resets at 00:00 UTC every day.",
    );
  });
});

describe("Function: tenantAccess", () => {
  const settings = (autoEnroll: boolean) => ({ plans: planCatalog(), autoEnroll, autoEnrollApiKeyValue: "pool-key" });

  it.each([
    ["an active tenant", tenant(), false, { allowed: true, enrollment: "enrolled", apiKeyValue: "key-1" }],
    ["an unknown organization with auto-enroll on", undefined, true, { allowed: true, enrollment: "auto", apiKeyValue: "pool-key" }],
    ["an unknown organization with auto-enroll off", undefined, false, { allowed: false, failedCode: "tenant-403-not-enrolled" }],
    [
      "a suspended tenant (even with auto-enroll on)",
      tenant({ status: "suspended" }),
      true,
      { allowed: false, failedCode: "tenant-403-suspended" },
    ],
    [
      "a tenant on a plan removed from the plans file (served on the default plan, with its own key)",
      tenant({ plan: "platinum" }),
      false,
      { allowed: true, enrollment: "enrolled", plan: { name: "standard" }, apiKeyValue: "key-1" },
    ],
    [
      "a tenant without a key",
      tenant({ apiKeyValue: undefined, apiKeyId: undefined }),
      true,
      { allowed: false, failedCode: "tenant-403-plan" },
    ],
    [
      "a local tenant (a key reference, no value)",
      tenant({ apiKeyValue: undefined, apiKeyId: "local-1" }),
      false,
      { allowed: true, enrollment: "enrolled" },
    ],
  ])("decides %s", (_name, record, autoEnroll, expected) => {
    const access = tenantAccess(record, settings(autoEnroll));
    expect(access).toMatchObject(expected);
    if (!access.allowed) expect(access.message).not.toMatch(/["\\]/);
  });

  it("lets an auto-enrolled organization in on the default plan", () => {
    const access = tenantAccess(undefined, settings(true));
    expect(access.allowed && access.plan.name).toBe("standard");
  });
});

describe("Module: authorizer context", () => {
  it("carries the verified caller through API Gateway's flat string context and back", () => {
    const caller = {
      organizationId: "org-1",
      userId: "user-1",
      hubIds: ["h1", "h2"],
      permissions: new Set(["view/vehicle", "add/vehicle"]),
      permissionDetails: [{ permissionName: "view/data", dataTypeId: "dt", hiddenFields: ["salary"] }],
    };
    const context = authorizerContextOf(caller);
    expect(Object.values(context).every((value) => typeof value === "string")).toBe(true);
    expect(callerFromAuthorizerContext({ ...context, principalId: "user-1", integrationLatency: 3 })).toEqual(caller);
  });

  it.each([
    [null],
    [undefined],
    [{}],
    [{ organizationId: "o", userId: "u", hubIds: "not json", permissions: "[]", permissionDetails: "[]" }],
  ])("finds no caller in %j", (context) => {
    expect(callerFromAuthorizerContext(context)).toBeUndefined();
  });
});
