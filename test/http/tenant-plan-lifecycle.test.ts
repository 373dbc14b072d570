import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import type { TenantUsageLine } from "#local/operator-usage";
import { changeTenantPlan, enrollTenant, type TenantOperations } from "#shared/app/tenants";
import { configuredPlans } from "#shared/config/tenant-plans";
import { planCatalog } from "#shared/domain/tenants/plan-catalog";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { localApiKeys } from "#shared/tenancy/local-api-keys";
import { testDefaultPlan, testPlans } from "#test/support/test-plans";
import { localCli } from "#test/support/local-cli";
import { apiClient, newOrganizationId, tokenFor } from "#test/support/local-api";

/**
 * Plans that come and go, and the invoicing export, against the suite's local stack (its gateway
 * runs the authorizer and the local usage plans with the suite's plans file, test-plans.ts).
 */
const { cli } = localCli("tenant-lifecycle");
const tenantRecord = async (organizationId: string) =>
  (await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.tenant(organizationId), ConsistentRead: true }))).Item;

describe("Plans lifecycle and the all-tenant export", { timeout: 120_000 }, () => {
  it("serves the tenants of a plan removed from the plans file on the default plan, and retire-plan moves their records", async () => {
    // Enrolled while the plans file had `gold`; the suite's plans file (the running stack's) has no `gold`.
    const gold = { name: "gold", description: "a plan about to be removed", rate: 100, burst: 100, maxRunsQueued: 5 };
    const withGold: TenantOperations = {
      plans: planCatalog({ defaultPlan: testDefaultPlan, plans: [...testPlans, gold] }),
      apiKeys: localApiKeys,
    };
    const organizationId = newOrganizationId();
    await enrollTenant(organizationId, "gold", withGold);
    expect(configuredPlans().named("gold")).toBeUndefined();

    const before = await apiClient(tokenFor({ organizationId, sub: "gold-removed" })).get("/vehicles");
    expect(before.status).toBe(200);

    const retired = await cli("local/tenant-cli.ts", "retire-plan", "gold");
    expect(retired.stdout).toContain(`moved\t${organizationId}\t${testDefaultPlan}\tactive`);
    const record = await tenantRecord(organizationId);
    expect(record).toMatchObject({ plan: testDefaultPlan, status: "active", apiKeyId: expect.stringMatching(/^local-/) });
    expect(((record?.planHistory ?? []) as Array<{ plan: string; to?: string }>).map(({ plan, to }) => [plan, to !== undefined])).toEqual([
      ["gold", true],
      [testDefaultPlan, false],
    ]);
    const after = await apiClient(tokenFor({ organizationId, sub: "retired" })).get("/vehicles");
    expect(after.status).toBe(200);
  });

  it("exports every tenant over a month (CSV and JSON), counting the calls made before a plan change", async () => {
    const operations: TenantOperations = { plans: configuredPlans(), apiKeys: localApiKeys };
    const moved = newOrganizationId();
    const steady = newOrganizationId();
    await enrollTenant(moved, testDefaultPlan, operations);
    await enrollTenant(steady, testDefaultPlan, operations);
    const movedApi = apiClient(tokenFor({ organizationId: moved, sub: "before" }));
    for (let i = 0; i < 3; i++) expect((await movedApi.get("/vehicles")).status).toBe(200);
    await changeTenantPlan(moved, "test-daily-20", operations);
    const movedAfter = apiClient(tokenFor({ organizationId: moved, sub: "after" }));
    for (let i = 0; i < 2; i++) expect((await movedAfter.get("/vehicles")).status).toBe(200);
    expect((await apiClient(tokenFor({ organizationId: steady })).get("/vehicles")).status).toBe(200);

    const today = new Date();
    const from = `${today.toISOString().slice(0, 7)}-01`;
    const to = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1, 0)).toISOString().slice(0, 10);
    const listed = (JSON.parse((await cli("local/tenant-cli.ts", "list", "--json")).stdout) as Array<{ organizationId: string }>).map(
      (tenant) => tenant.organizationId,
    );

    const json = JSON.parse((await cli("local/usage-cli.ts", "--all", "--from", from, "--to", to, "--format", "json")).stdout) as {
      from: string;
      to: string;
      tenants: TenantUsageLine[];
    };
    expect(json).toMatchObject({ from, to, callsSource: "local-gateway" });
    // Every tenant enrolled before the export is in it (other test files enroll theirs meanwhile).
    expect(json.tenants.map((line) => line.organizationId)).toEqual(expect.arrayContaining(listed));
    expect(json.tenants.find((line) => line.organizationId === moved)).toEqual({
      organizationId: moved,
      plans: [testDefaultPlan, "test-daily-20"],
      status: "active",
      calls: 5,
      runs: 0,
      runSeconds: 0,
      travelElements: 0,
      webhookAttempts: 0,
      imports: 0,
      importRecords: 0,
    });
    expect(json.tenants.find((line) => line.organizationId === steady)).toMatchObject({ plans: [testDefaultPlan], calls: 1 });

    const csv = (await cli("local/usage-cli.ts", "--all", "--from", from, "--to", to)).stdout.split("\r\n");
    expect(csv[0]).toBe("organizationId,plans,status,calls,runs,runSeconds,travelElements,webhookAttempts,imports,importRecords");
    expect(csv).toContain(`${moved},${testDefaultPlan};test-daily-20,active,5,0,0,0,0,0,0`);
    expect(csv).toContain(`${steady},${testDefaultPlan},active,1,0,0,0,0,0,0`);
  });
});
