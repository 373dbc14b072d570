import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { enrollTenant } from "#shared/app/tenants";
import { bucketName, s3Client } from "#shared/blob/s3";
import { configuredPlans } from "#shared/config/tenant-plans";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys, objectKeys } from "#shared/store/keys";
import { localApiKeys } from "#shared/tenancy/local-api-keys";
import { localCli } from "#test/support/local-cli";
import { apiClient, newOrganizationId, tokenFor } from "#test/support/local-api";

/**
 * `npm run tenant -- offboard` against the suite's local stack: one organization's items, objects
 * and key go, its usage is exported, another organization's data is untouched.
 */
const { tenantCli, scratch } = localCli("tenant-offboard");

const partitionItems = async (pk: string) =>
  (
    await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: "PK = :pk",
        ExpressionAttributeValues: { ":pk": pk },
        ConsistentRead: true,
      }),
    )
  ).Items ?? [];
const objectsUnder = async (prefix: string) =>
  ((await s3Client().send(new ListObjectsV2Command({ Bucket: bucketName(), Prefix: prefix }))).Contents ?? []).map((object) => object.Key);

async function organizationWithData() {
  const organizationId = newOrganizationId();
  await enrollTenant(organizationId, undefined, { plans: configuredPlans(), apiKeys: localApiKeys });
  expect((await apiClient(tokenFor({ organizationId })).get("/vehicles")).status).toBe(200);
  for (const key of [keys.vehicle(organizationId, "v1"), keys.hub(organizationId, "h1"), keys.visit(organizationId, "h1", "x1")])
    await documentClient().send(new PutCommand({ TableName: tableName(), Item: { ...key, organizationId } }));
  for (const key of [objectKeys.travelMatrixCache(organizationId, "h1", "osrm"), objectKeys.routingResultBody(organizationId, "r1")])
    await s3Client().send(new PutObjectCommand({ Bucket: bucketName(), Key: key, Body: "data" }));
  return organizationId;
}

describe("Offboarding an organization", { timeout: 180_000 }, () => {
  it("dry run counts; offboard disables, exports the usage and erases the organization's items and objects; the other organization is untouched", async () => {
    const leaving = await organizationWithData();
    const staying = await organizationWithData();
    const org = keys.organizationPartition;

    const dryRun = await tenantCli("offboard", "--org", leaving, "--dry-run");
    expect(dryRun.stdout).toContain("would erase\t2\titems\tORG#o\n");
    expect(dryRun.stdout).toContain("would erase\t1\titems\tORG#o#HUB\n");
    expect(dryRun.stdout).toContain("would erase\t1\titems\tORG#o#USAGE\n");
    expect(dryRun.stdout).toContain(`would erase\t1\tobjects\ttravel-cache/${leaving}/\n`);
    expect(dryRun.stdout).toContain(`would erase\t1\tobjects\tresults/${leaving}/\n`);
    expect(await partitionItems(org(leaving))).toHaveLength(3);

    const exportFile = join(scratch(), "leaving.json");
    const offboarded = await tenantCli("offboard", "--org", leaving, "--export", exportFile);
    expect(offboarded.stdout).toContain("erased\t2\titems\tORG#o\n");
    const exported = JSON.parse(readFileSync(exportFile, "utf8")) as { organizationId: string; usage: Array<Record<string, unknown>> };
    expect(exported.organizationId).toBe(leaving);
    expect(exported.usage).toEqual([expect.objectContaining({ SK: `CALLS#${new Date().toISOString().slice(0, 10)}`, calls: 1 })]);

    // Only the tenant record is left, suspended and marked, so the organization is refused from now on.
    expect(await partitionItems(org(leaving))).toEqual([
      expect.objectContaining({ SK: "TENANT", status: "suspended", offboardedTime: expect.any(String) }),
    ]);
    expect(await partitionItems(keys.usagePartition(leaving))).toEqual([]);
    expect(await partitionItems(keys.visit(leaving, "h1", "x1").PK)).toEqual([]);
    expect(await objectsUnder(`travel-cache/${leaving}/`)).toEqual([]);
    expect(await objectsUnder(`results/${leaving}/`)).toEqual([]);
    const refused = await apiClient(tokenFor({ organizationId: leaving, sub: "after-offboarding" })).get("/vehicles");
    expect(refused.status).toBe(403);
    expect(refused.body.failedCode).toBe("tenant-403-suspended");

    expect(await partitionItems(org(staying))).toHaveLength(3);
    expect(await partitionItems(keys.usagePartition(staying))).toHaveLength(1);
    expect(await partitionItems(keys.visit(staying, "h1", "x1").PK)).toHaveLength(1);
    expect(await objectsUnder(`travel-cache/${staying}/`)).toHaveLength(1);
    expect(await objectsUnder(`results/${staying}/`)).toHaveLength(1);
    // (The fake vehicle item is no vehicle GET /vehicles could list: ask for something else.)
    const today = new Date().toISOString().slice(0, 10);
    expect((await apiClient(tokenFor({ organizationId: staying })).get(`/usage?from=${today}&to=${today}`)).status).toBe(200);
  });
});
