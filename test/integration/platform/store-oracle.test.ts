import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { DeleteCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import { bucketName, s3Client } from "#shared/blob/s3";
import { appConfig } from "#shared/config/env";
import type { RouteDefinition } from "#shared/http/route";
import { sqsClient } from "#shared/queue/sqs";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import type { FixtureSet } from "#test/fuzz/fixtures";
import { runFuzz } from "#test/fuzz/route-fuzzer";
import { StoreOracle, storeChanges } from "#test/fuzz/store-oracle";
import { useIsolatedTableAndQueue } from "#test/support/isolated-resources";

/**
 * The fuzzer's store oracle (test/fuzz/store-oracle.ts) keeps its copy of the table from the
 * table's stream instead of scanning after every request: against DynamoDB Local's real stream, the
 * copy must see every write a Scan would (added, changed, removed, anywhere in the table), ignore
 * what a Scan-based oracle ignored (metering, version bookkeeping), and still make the fuzzer fail
 * when a refused request writes (a planted one).
 */
const organizationId = `fuzz-${randomUUID()}`;
const bystanderOrganizationId = `bystander-${randomUUID()}`;
const organizations = [organizationId, bystanderOrganizationId];
let oracle: StoreOracle;

beforeAll(async () => {
  await useIsolatedTableAndQueue();
  oracle = new StoreOracle({
    tableName: tableName(),
    bucketName: bucketName(),
    queueUrl: appConfig().RUN_QUEUE_URL,
    organizationIds: organizations,
    s3: s3Client(),
    sqs: sqsClient(),
  });
});
afterAll(() => oracle.destroy());

const put = (key: { PK: string; SK: string }, data: Record<string, unknown>) =>
  documentClient().send(new PutCommand({ TableName: tableName(), Item: { ...key, ...data } }));

describe("Module: store oracle (DynamoDB Local's stream)", () => {
  it("sees every write a Scan sees, in any partition, and nothing else", async () => {
    const kept = keys.vehicle(organizationId, "kept");
    const changed = keys.vehicle(organizationId, "changed");
    const removed = keys.hub(organizationId, "removed");
    const versionOnly = keys.vehicle(bystanderOrganizationId, "version-only");
    for (const key of [kept, changed, removed]) await put(key, { name: "before", version: 1 });
    await put(versionOnly, { name: "same", version: 1 });
    const before = await oracle.snapshot();
    expect(before.items.size).toBe(4);

    // Nothing written: the stream-kept copy is the same map.
    expect((await oracle.refresh(before, ["tableWrite"])).items).toBe(before.items);

    await put(changed, { name: "after", version: 2 });
    await documentClient().send(new DeleteCommand({ TableName: tableName(), Key: removed }));
    await put({ PK: `${keys.organizationPartition(organizationId)}#NOWHERE`, SK: "PLANTED" }, { any: "thing" });
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: versionOnly,
        UpdateExpression: "SET version = version + :one",
        ExpressionAttributeValues: { ":one": 1 },
      }),
    );
    // Metering (the usage plans' call counter) is not data.
    const counter = keys.callCounter(organizationId, "2026-11-28");
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: counter,
        UpdateExpression: "ADD calls :one",
        ExpressionAttributeValues: { ":one": 1 },
      }),
    );
    await put(kept, { name: "before", version: 1 }); // rewritten unchanged

    const after = await oracle.refresh(before, ["tableWrite"]);
    expect(storeChanges(before, after, organizations).map((change) => change.description)).toEqual([
      `item changed: ${changed.PK} ${changed.SK}`,
      `item added: ${keys.organizationPartition(organizationId)}#NOWHERE PLANTED`,
      `item removed: ${removed.PK} ${removed.SK}`,
    ]);
    // The copy is the table as a Scan reads it.
    expect(await oracle.verify(after)).toEqual([]);
    // A route without the table grant does not look (as before the stream): the next look sees it.
    await put(kept, { name: "moved" });
    const notLooked = await oracle.refresh(after, ["bucketWrite"]);
    expect(notLooked.items).toBe(after.items);
    expect(storeChanges(after, await oracle.refresh(notLooked, ["tableWrite"]), organizations)).toEqual([
      { organizationId, description: `item changed: ${kept.PK} ${kept.SK}` },
    ]);
  });

  it("verify names the keys where a copy differs from the table", async () => {
    const current = await oracle.snapshot(await oracle.snapshot());
    expect(await oracle.verify(current)).toEqual([]);
    const stale = new Map(current.items);
    const [firstKey] = [...stale.keys()];
    stale.set(firstKey as string, "not the item's hash");
    stale.set("ORG#ghost NOT#THERE", "x");
    expect(await oracle.verify({ ...current, items: stale })).toEqual([
      expect.stringMatching(new RegExp(`^${firstKey}: kept .*; table \\{`)),
      "ORG#ghost NOT#THERE: kept (scanned); table (none)",
    ]);
  });

  it("makes the fuzzer fail a refused request that wrote, and a request that wrote another organization's data", async () => {
    // A planted API: every request writes into the table and answers a well-formed refusal, or
    // (the bystander case) a success that wrote the other organization's data.
    let plant: "refusal" | "bystander" = "refusal";
    const server: Server = createServer((request, response) => {
      request.resume();
      request.on("end", async () => {
        const owner = plant === "refusal" ? organizationId : bystanderOrganizationId;
        await put(keys.vehicle(owner, randomUUID()), { name: "planted" });
        const refused = plant === "refusal";
        response.writeHead(refused ? 400 : 201, { "content-type": "application/json" });
        response.end(
          JSON.stringify(
            refused
              ? { status: false, message: "Bad request", failedCode: "sys-400", errors: [{ field: "name", message: "is wrong" }] }
              : { status: true, message: "Created", data: {} },
          ),
        );
      });
    });
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    try {
      const createVehicle = routes.find((route) => route.operationId === "createVehicle") as RouteDefinition;
      expect(createVehicle.grants).toContain("tableWrite");
      const fixtures = { id: (name: string) => `fixture-${name}`, ensure: async () => undefined } as unknown as FixtureSet;
      const fuzz = () =>
        runFuzz({
          baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v3`,
          routes: [createVehicle],
          token: "planted",
          fixtures,
          foreignFixtures: fixtures,
          oracle,
          organizationId,
          bystanderOrganizationId,
          seed: 7,
          runs: 3,
        });
      const refused = await fuzz();
      expect(refused.failures.map((failure) => failure.check)).toEqual(Array(3).fill("4xx changed stored data"));
      expect(refused.failures[0]?.details?.[0]).toMatch(new RegExp(`^item added: ${keys.organizationPartition(organizationId)} `));

      plant = "bystander";
      const bystander = await fuzz();
      expect(bystander.failures.map((failure) => failure.check)).toEqual(Array(3).fill("another organization's data changed"));
    } finally {
      server.closeAllConnections();
      await new Promise<void>((closed) => server.close(() => closed()));
    }
  });
});
