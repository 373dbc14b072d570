import { DeleteObjectCommand, ListObjectsV2Command, ListObjectVersionsCommand } from "@aws-sdk/client-s3";
import { BatchWriteCommand, ScanCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { TenantApiKeys } from "#shared/app/tenants";
import { bucketName, s3Client } from "#shared/blob/s3";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys, objectKinds } from "#shared/store/keys";
import { findTenant } from "#shared/store/tenant-store";

/**
 * `npm run tenant -- offboard --org <id> [--dry-run] [--aws]`: an organization leaves. In order:
 * 1. disable: its API key disabled then deleted (on AWS API Gateway refuses it at once), its tenant
 *    record marked `status: suspended` and `offboardedTime` — kept, so the authorizer refuses the
 *    organization from then on, also with auto-enroll on;
 * 2. export: every item of its usage partition (calls, runs, imports, webhook attempts), returned
 *    for the operator to keep for the last invoice;
 * 3. erase: every other DynamoDB item of the organization and every S3 object under its prefixes.
 *
 * How the items are found: every partition key of an organization's items is `ORG#<o>` or starts
 * with `ORG#<o>#` (shared/store/keys.ts), across many partitions named by ids (data types, hubs,
 * vehicles, visits, records, webhooks…, and those features add later). Listing them partition by
 * partition would miss any a later feature adds, so this operator command pages through the table
 * with a Scan filtered on the key prefix (never on a request path; a read of the whole table per
 * offboarding, paged by DynamoDB's 1 MB). S3: each object kind's `<kind>/<o>/` prefix
 * (objectKinds) and the earlier layout's `org/<o>/`; with `versions` every version and delete
 * marker is deleted (the stack's bucket is versioned), else the current objects.
 */
export interface OffboardReport {
  organizationId: string;
  dryRun: boolean;
  /** Items erased (or, dry run, to erase) per kind of partition key (`ORG#o`, `ORG#o#HUB`, …). */
  items: Record<string, number>;
  /** Objects (or object versions) erased per prefix. */
  objects: Record<string, number>;
  /** The usage partition's items, as they were. */
  usage: Record<string, unknown>[];
}

export async function offboardOrganization(
  organizationId: string,
  options: { dryRun: boolean; apiKeys: TenantApiKeys; versions: boolean; now?: () => Date },
): Promise<OffboardReport> {
  const tenant = await findTenant(organizationId);
  if (!options.dryRun && tenant) {
    await options.apiKeys.setEnabled(tenant, false);
    await options.apiKeys.remove(tenant.apiKeyId);
    const time = (options.now?.() ?? new Date()).toISOString();
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.tenant(organizationId),
        UpdateExpression: "SET #status = :suspended, offboardedTime = :time, updatedTime = :time REMOVE apiKeyValue",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":suspended": "suspended", ":time": time },
      }),
    );
  }

  const partition = keys.organizationPartition(organizationId);
  const usagePartition = keys.usagePartition(organizationId);
  const tenantKey = keys.tenant(organizationId);
  const report: OffboardReport = { organizationId, dryRun: options.dryRun, items: {}, objects: {}, usage: [] };
  const doomed: Array<{ PK: string; SK: string }> = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documentClient().send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: "PK = :partition OR begins_with(PK, :prefix)",
        ExpressionAttributeValues: { ":partition": partition, ":prefix": `${partition}#` },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) {
      const key = { PK: String(item.PK), SK: String(item.SK) };
      if (key.PK === tenantKey.PK && key.SK === tenantKey.SK) continue;
      if (key.PK === usagePartition) report.usage.push(item);
      // The kind of partition: the key with its ids left out (ORG#o#HUB#h → ORG#o#HUB).
      const kind = key.PK.slice(partition.length)
        .split("#")
        .filter((_, index) => index % 2 === 1);
      const name = ["ORG#o", ...kind].join("#");
      report.items[name] = (report.items[name] ?? 0) + 1;
      doomed.push(key);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);

  if (!options.dryRun) {
    for (let index = 0; index < doomed.length; index += 25) {
      let requests: Record<string, unknown>[] | undefined = doomed.slice(index, index + 25).map((Key) => ({ DeleteRequest: { Key } }));
      for (let attempt = 0; requests?.length; attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(2 ** attempt * 50, 2000)));
        const output = await documentClient().send(new BatchWriteCommand({ RequestItems: { [tableName()]: requests as never } }));
        requests = output.UnprocessedItems?.[tableName()] as Record<string, unknown>[] | undefined;
      }
    }
  }

  const owner = encodeURIComponent(organizationId);
  const prefixes = [...Object.values(objectKinds).map((kind) => `${kind}${owner}/`), `org/${owner}/`];
  for (const prefix of prefixes) {
    let count = 0;
    let keyMarker: string | undefined;
    let versionMarker: string | undefined;
    let token: string | undefined;
    do {
      if (options.versions) {
        const page = await s3Client().send(
          new ListObjectVersionsCommand({ Bucket: bucketName(), Prefix: prefix, KeyMarker: keyMarker, VersionIdMarker: versionMarker }),
        );
        const versions = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])];
        count += versions.length;
        if (!options.dryRun)
          for (const version of versions)
            await s3Client().send(new DeleteObjectCommand({ Bucket: bucketName(), Key: version.Key, VersionId: version.VersionId }));
        keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
        versionMarker = page.IsTruncated ? page.NextVersionIdMarker : undefined;
      } else {
        const page = await s3Client().send(new ListObjectsV2Command({ Bucket: bucketName(), Prefix: prefix, ContinuationToken: token }));
        count += page.Contents?.length ?? 0;
        if (!options.dryRun)
          for (const object of page.Contents ?? [])
            await s3Client().send(new DeleteObjectCommand({ Bucket: bucketName(), Key: object.Key }));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      }
    } while (keyMarker || token);
    if (count > 0) report.objects[prefix] = count;
  }
  return report;
}
