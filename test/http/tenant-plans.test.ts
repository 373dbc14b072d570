import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { changeTenantPlan, enrollTenant, setTenantStatus, type TenantOperations } from "#shared/app/tenants";
import { configuredPlans } from "#shared/config/tenant-plans";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { localApiKeys } from "#shared/tenancy/local-api-keys";
import { apiClient, newOrganizationId, tokenFor } from "#test/support/local-api";
import { refusal } from "#test/support/refusals";

/**
 * Plans at the local gateway (the same plans API Gateway's usage plans enforce on AWS): a token
 * bucket per tenant and call quotas counted in the local store. The suite's runtime adds the test
 * plans of test/support/test-plans.ts, as an operator adds theirs.
 */
const operations = (): TenantOperations => ({ plans: configuredPlans(), apiKeys: localApiKeys });
const today = () => new Date().toISOString().slice(0, 10);

async function enrolledClient(plan: string, sub = "user-1") {
  const organizationId = newOrganizationId();
  await enrollTenant(organizationId, plan, operations());
  return { organizationId, api: apiClient(tokenFor({ organizationId, sub })) };
}

describe("Tenant plans at the local gateway", { timeout: 240_000 }, () => {
  it("answers 429 sys-429 past a tenant's rate (5/s) while another tenant on the same server is unaffected", async () => {
    // Prepare
    const busy = await enrolledClient("test-5rps");
    const quiet = await enrolledClient("test-5rps");

    // Act: one call caches the authorizer's answer for the token; then far more at once than the
    // 4 tokens left in the bucket and 5 more per second allow
    expect((await busy.api.get("/vehicles")).status).toBe(200);
    const storm = await Promise.all(Array.from({ length: 40 }, () => busy.api.get("/vehicles")));
    const others = [];
    for (let i = 0; i < 5; i++) others.push(await quiet.api.get("/vehicles"));

    // Assess
    const throttled = storm.filter((response) => response.status === 429);
    expect(throttled.length).toBeGreaterThan(0);
    expect(storm.filter((response) => response.status === 200).length).toBeGreaterThanOrEqual(4);
    for (const response of throttled) {
      expect(response.body).toEqual({ status: false, message: "Too many requests.", failedCode: "sys-429" });
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(response.headers.get("x-request-id")).toBeTruthy();
    }
    expect(others.map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
  });

  it("answers the 21st call of a day on a 20-a-day plan with 429 sys-429-quota naming the quota and its reset; the day's counter holds 20", async () => {
    // Prepare
    const { organizationId, api } = await enrolledClient("test-daily-20");

    // Act
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await api.get("/vehicles")).status);
    const over = await api.get("/vehicles");

    // Assess
    expect(statuses).toEqual(Array(20).fill(200));
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ status: false, failedCode: "sys-429-quota" });
    expect(over.body.message).toBe(
      "The daily call quota of plan test-daily-20 (20 calls per day) is used up; it resets at 00:00 UTC every day.",
    );
    const counter = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.callCounter(organizationId, today()) }));
    expect(counter.Item?.calls).toBe(20);
  });

  it("counts a monthly quota across the month: the 16th call on a 15-a-month plan is refused", async () => {
    const { api } = await enrolledClient("test-monthly-15");
    for (let i = 0; i < 15; i++) expect((await api.get("/vehicles")).status).toBe(200);
    const over = await api.get("/vehicles");
    expect(over.status).toBe(429);
    expect(over.body.failedCode).toBe("sys-429-quota");
    expect(over.body.message).toMatch(/monthly call quota of plan test-monthly-15 \(15 calls per month\).*1st of every month/);
  });

  it("counts every accepted call of an auto-enrolled organization on its day's counter", async () => {
    const organizationId = newOrganizationId();
    const api = apiClient(tokenFor({ organizationId }));
    for (let i = 0; i < 3; i++) expect((await api.get("/vehicles")).status).toBe(200);
    expect(refusal(await apiClient(undefined).get("/vehicles"))).toEqual({ status: 401, failedCode: "sys-401" });
    const counter = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.callCounter(organizationId, today()) }));
    expect(counter.Item?.calls).toBe(3);
  });

  it("answers 403 tenant-403-suspended to a suspended tenant, and serves it again once resumed", async () => {
    // Prepare
    const { organizationId } = await enrolledClient("standard");
    await setTenantStatus(organizationId, "suspended", operations());

    // Act (a new token per phase: the authorizer's answer is cached per token, as on API Gateway)
    const refused = await apiClient(tokenFor({ organizationId, sub: "while-suspended" })).get("/vehicles");
    await setTenantStatus(organizationId, "active", operations());
    const served = await apiClient(tokenFor({ organizationId, sub: "after-resume" })).get("/vehicles");

    // Assess
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      status: false,
      message: "The organization is suspended: ask the operator to resume it.",
      failedCode: "tenant-403-suspended",
    });
    expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    expect(served.status).toBe(200);
  });

  it("applies a new plan (set-plan) to the next token's calls", async () => {
    const { organizationId } = await enrolledClient("standard");
    await changeTenantPlan(organizationId, "test-daily-20", operations());
    const api = apiClient(tokenFor({ organizationId, sub: "on-the-new-plan" }));
    for (let i = 0; i < 20; i++) await api.get("/vehicles");
    expect((await api.get("/vehicles")).body.failedCode).toBe("sys-429-quota");
  });
});
