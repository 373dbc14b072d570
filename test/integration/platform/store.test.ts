import { randomUUID } from "node:crypto";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { bucketName, s3Client } from "#shared/blob/s3";
import { ConflictError, NotFoundError, ValidationError } from "#shared/domain/errors";
import { documentClient, tableName } from "#shared/store/dynamo";
import { deleteItem, getVersioned, insertItem, replaceItem } from "#shared/store/items";
import { keys } from "#shared/store/keys";
import { queryPage } from "#shared/store/pagination";

/** The storage helpers every store builds on, against DynamoDB Local and s3rver (started by globalSetup). */
describe("Module: versioned items (DynamoDB Local)", () => {
  const key = () => keys.vehicle(`org-${randomUUID()}`, randomUUID());

  it("inserts once: a second insert with the same key is refused", async () => {
    const k = key();
    expect(await insertItem(k, { name: "a" })).toBe(true);
    expect(await insertItem(k, { name: "b" })).toBe(false);
    expect((await getVersioned<{ name: string }>(k))?.value).toEqual({ name: "a" });
  });

  it("replaces only the version that was read; a stale writer gets a conflict", async () => {
    const k = key();
    await insertItem(k, { name: "a" });
    const read = await getVersioned<{ name: string }>(k);
    await replaceItem(k, { name: "b" }, read?.version as number);
    await expect(replaceItem(k, { name: "stale" }, read?.version as number)).rejects.toBeInstanceOf(ConflictError);
    expect(await getVersioned(k)).toEqual({ value: { name: "b" }, version: 2 });
  });

  it("of two concurrent replaces of the same version exactly one wins", async () => {
    const k = key();
    await insertItem(k, { name: "a" });
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => replaceItem(k, { name: `w${i}` }, 1)));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
  });

  it("answers not found when replacing a deleted item, and delete is idempotent-safe", async () => {
    const k = key();
    await insertItem(k, { name: "a" });
    expect(await deleteItem(k, 1)).toBe(true);
    expect(await deleteItem(k)).toBe(false);
    await expect(replaceItem(k, { name: "b" }, 1)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("Module: queryPage (DynamoDB Local)", () => {
  it("reads one partition in bounded pages and never leaks a neighbouring prefix", async () => {
    const organization = `org-${randomUUID()}`;
    for (let i = 0; i < 7; i++) await insertItem(keys.vehicle(organization, `v${i}`), { n: i });
    await insertItem(keys.hub(organization, "h1"), { n: 99 });
    const seen: number[] = [];
    let cursor: string | null | undefined;
    let pages = 0;
    do {
      const page = await queryPage<{ n: number }>({
        partition: keys.organizationPartition(organization),
        sortKeyPrefix: keys.vehiclePrefix,
        limit: 3,
        cursor: cursor ?? undefined,
      });
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((item) => item.n));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(seen.sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(pages).toBeGreaterThanOrEqual(3);
  });

  it("rejects a cursor of another prefix in the same partition", async () => {
    const organization = `org-${randomUUID()}`;
    await insertItem(keys.hub(organization, "h1"), {});
    await insertItem(keys.hub(organization, "h2"), {});
    const hubs = await queryPage({ partition: keys.organizationPartition(organization), sortKeyPrefix: keys.hubPrefix, limit: 1 });
    await expect(
      queryPage({
        partition: keys.organizationPartition(organization),
        sortKeyPrefix: keys.vehiclePrefix,
        limit: 1,
        cursor: hubs.nextCursor as string,
      }),
    ).rejects.toBeInstanceOf(ValidationError);
  });

  it("uses the table the local stack created from the shared definition", async () => {
    await expect(
      documentClient().send(new PutCommand({ TableName: tableName(), Item: { PK: "probe", SK: "probe", GSI1PK: "x", GSI1SK: "y" } })),
    ).resolves.toBeDefined();
  });
});

describe("Module: S3 client (s3rver)", () => {
  it("stores and returns bytes unchanged (no aws-chunked framing)", async () => {
    const key = `test/${randomUUID()}.bin`;
    const bytes = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7) % 256);
    await s3Client().send(new PutObjectCommand({ Bucket: bucketName(), Key: key, Body: bytes }));
    const object = await s3Client().send(new GetObjectCommand({ Bucket: bucketName(), Key: key }));
    expect(Buffer.from(await (object.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray())).toEqual(
      Buffer.from(bytes),
    );
  });
});
