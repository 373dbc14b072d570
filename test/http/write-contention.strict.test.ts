import { DynamoDBClient, TransactWriteItemsCommand } from "@aws-sdk/client-dynamodb";
import { marshall } from "@aws-sdk/util-dynamodb";
import { afterEach, describe, expect, it } from "vitest";
import { resetAppConfig } from "#shared/config/env";
import { keys } from "#shared/store/keys";
import { type ApiClient, newTenant } from "#test/support/local-api";
import { resetStrictDynamoDb } from "#test/support/strict-dynamodb";

/**
 * Contention is retried, not reported (shared/store/contention-retry.ts), under the strict
 * semantics of this file (test/support/strict-dynamodb.ts): throttled and conflicting writes
 * commit after retries; only a spent budget answers, with 503 sys-503 and Retry-After, never 409.
 */
const validVehicle = {
  name: "Van",
  type: "truck",
  capacity: { weight: { min: 10, max: 500 } },
  workingTime: { startTime: "07:00", endTime: "16:00", multiday: 0 },
};

async function tenantWithHub(): Promise<{ api: ApiClient; organizationId: string; hubId: string }> {
  const { api, organizationId } = newTenant();
  const hub = await api.post("/hub", { name: "Depot", address: "Depot street 1", lat: -6.2, lng: 106.8 });
  expect(hub.status).toBe(201);
  return { api, organizationId, hubId: hub.body.data._id };
}

/** Runs `tasks` with at most `limit` in flight. */
async function inParallel<T>(limit: number, tasks: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < tasks.length) {
        const index = next++;
        results[index] = await (tasks[index] as () => Promise<T>)();
      }
    }),
  );
  return results;
}

afterEach(() => {
  delete process.env.DYNAMODB_RETRY_BUDGET_MS;
  resetAppConfig();
  resetStrictDynamoDb();
});

describe("writes under contention", () => {
  it("with 5% of DynamoDB calls throttled, 30 vehicle creates all answer 201 and every vehicle is there", async () => {
    const { api, hubId } = await tenantWithHub();
    const semantics = resetStrictDynamoDb({ throttleRate: 0.05, seed: 5 });
    const responses = await inParallel(
      5,
      Array.from({ length: 30 }, (_, index) => () => api.post("/vehicle", { ...validVehicle, name: `Van ${index}`, hubId })),
    );
    const throttled = semantics.counters().throttledCalls;
    semantics.configure({ throttleRate: 0 });
    expect(responses.map((response) => response.status)).toEqual(responses.map(() => 201));
    // The test would prove nothing if nothing had been throttled.
    expect(throttled).toBeGreaterThan(0);
    for (const response of responses) expect((await api.get(`/vehicle/${response.body.data._id}`)).status).toBe(200);
    const hub = await api.get(`/hub/${hubId}`);
    expect(hub.status).toBe(200);
  });

  it("a write that meets a transaction holding its item is retried, not reported: 200 once the item is released, no 409", async () => {
    const { api, organizationId, hubId } = await tenantWithHub();
    const created = await api.post("/vehicle", { ...validVehicle, hubId });
    expect(created.status).toBe(201);
    const vehicleId = created.body.data._id as string;
    const semantics = resetStrictDynamoDb();
    await expect.poll(() => semantics.heldItemCount()).toBe(0);
    // Another writer's transaction holds the vehicle item (a check only, so it changes nothing).
    semantics.pauseReleases();
    await new DynamoDBClient({ maxAttempts: 1 }).send(
      new TransactWriteItemsCommand({
        TransactItems: [
          {
            ConditionCheck: {
              TableName: process.env.TABLE_NAME as string,
              Key: marshall(keys.vehicle(organizationId, vehicleId)),
              ConditionExpression: "attribute_exists(PK)",
            },
          },
        ],
      }),
    );
    const patched = api.patch(`/vehicle/${vehicleId}`, { name: "Renamed" });
    // The PATCH meets the held item (a conflict), backs off and tries again; release the hold meanwhile.
    await expect
      .poll(() => semantics.counters().transactionConflicts + semantics.counters().singleWriteConflicts, { timeout: 20_000 })
      .toBeGreaterThan(0);
    semantics.releaseHeldTransactions();
    const response = await patched;
    expect(response.status).toBe(200);
    expect((await api.get(`/vehicle/${vehicleId}`)).body.data.name).toBe("Renamed");
  });

  it("a budget spent on throttles answers 503 sys-503 with Retry-After, and nothing is written", async () => {
    const { api, hubId } = await tenantWithHub();
    process.env.DYNAMODB_RETRY_BUDGET_MS = "300";
    resetAppConfig();
    // Only the writes: the authorizer's reads stay answered (its answer is cached anyway).
    const semantics = resetStrictDynamoDb({
      throttleRate: 1,
      throttleOperations: ["PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems"],
    });
    const response = await api.post("/vehicle", { ...validVehicle, hubId });
    semantics.configure({ throttleRate: 0 });
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ status: false, failedCode: "sys-503" });
    expect(response.headers.get("retry-after")).toBe("1");
    expect((await api.get("/vehicles")).body.data).toEqual([]);
  });

  it("a budget spent waiting for a transaction that holds the item answers 503, not 409, and changes nothing", async () => {
    const { api, organizationId, hubId } = await tenantWithHub();
    const created = await api.post("/vehicle", { ...validVehicle, hubId });
    expect(created.status).toBe(201);
    const vehicleId = created.body.data._id as string;
    process.env.DYNAMODB_RETRY_BUDGET_MS = "300";
    resetAppConfig();
    const semantics = resetStrictDynamoDb();
    // The create's own transaction keeps its items for the strict hold after it answered.
    await expect.poll(() => semantics.heldItemCount()).toBe(0);
    // Another writer's transaction holds the vehicle item (a check only, so it changes nothing).
    semantics.pauseReleases();
    await new DynamoDBClient({ maxAttempts: 1 }).send(
      new TransactWriteItemsCommand({
        TransactItems: [
          {
            ConditionCheck: {
              TableName: process.env.TABLE_NAME as string,
              Key: marshall(keys.vehicle(organizationId, vehicleId)),
              ConditionExpression: "attribute_exists(PK)",
            },
          },
        ],
      }),
    );
    const response = await api.patch(`/vehicle/${vehicleId}`, { name: "Renamed" });
    semantics.releaseHeldTransactions();
    expect(response.status).toBe(503);
    expect(response.body.failedCode).toBe("sys-503");
    expect(response.headers.get("retry-after")).toBe("1");
    expect((await api.get(`/vehicle/${vehicleId}`)).body.data.name).toBe("Van");
    // Released, the same change goes through.
    expect((await api.patch(`/vehicle/${vehicleId}`, { name: "Renamed" })).status).toBe(200);
  });
});
