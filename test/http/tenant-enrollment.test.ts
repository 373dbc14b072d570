import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import { resetAppConfig } from "#shared/config/env";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { startGateway } from "#test/support/gateway-server";
import { localCli } from "#test/support/local-cli";
import { newOrganizationId, tokenFor } from "#test/support/local-api";

/**
 * Enrollment as the stack has it by default (auto-enroll off), on a local gateway of this test
 * file running the same authorizer, and the operator's `npm run tenant` against the suite's store.
 */
const { tenantCli } = localCli("tenant-cli");

beforeAll(() => {
  process.env.TENANT_AUTO_ENROLL = "false";
  resetAppConfig();
});

const get = async (baseUrl: string, token: string) => {
  const response = await fetch(`${baseUrl}/vehicles`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, headers: response.headers };
};

describe("Enrollment with auto-enroll off (the stack's default)", { timeout: 120_000 }, () => {
  it("answers 403 tenant-403-not-enrolled to an organization that is not enrolled", async () => {
    const baseUrl = await startGateway(routes);
    const response = await get(baseUrl, tokenFor({ organizationId: newOrganizationId() }));
    expect(response.status).toBe(403);
    expect(response.body).toEqual({
      status: false,
      message: "Organization not enrolled: ask the operator to enroll it on a plan.",
      failedCode: "tenant-403-not-enrolled",
    });
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("serves an organization enrolled with `npm run tenant -- create`, lists it, and refuses it once suspended", async () => {
    const baseUrl = await startGateway(routes);
    const organizationId = newOrganizationId();

    const created = await tenantCli("create", "--org", organizationId, "--plan", "free");
    expect(created.stdout).toMatch(new RegExp(`^enrolled\\t${organizationId}\\tfree\\tactive\\t`));
    expect((await get(baseUrl, tokenFor({ organizationId, sub: "enrolled" }))).status).toBe(200);
    // The local record names its key by reference only: no key value is stored in clear.
    const { Item } = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.tenant(organizationId), ConsistentRead: true }),
    );
    expect(Item).toMatchObject({ organizationId, apiKeyId: expect.stringMatching(/^local-[0-9a-f-]{36}$/) });
    expect(Item).not.toHaveProperty("apiKeyValue");

    const listed = JSON.parse((await tenantCli("list", "--json")).stdout) as Array<Record<string, unknown>>;
    expect(listed.find((tenant) => tenant.organizationId === organizationId)).toMatchObject({ plan: "free", status: "active" });

    await tenantCli("suspend", "--org", organizationId);
    const suspended = await get(baseUrl, tokenFor({ organizationId, sub: "suspended" }));
    expect(suspended.status).toBe(403);
    expect(suspended.body.failedCode).toBe("tenant-403-suspended");
  });

  it("refuses an unknown plan and a second enrollment, with a message and exit code 1", async () => {
    const organizationId = newOrganizationId();
    await expect(tenantCli("create", "--org", organizationId, "--plan", "platinum")).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining("no plan named platinum"),
    });
    await tenantCli("create", "--org", organizationId);
    await expect(tenantCli("create", "--org", organizationId)).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining("enrolled already"),
    });
  });
});
