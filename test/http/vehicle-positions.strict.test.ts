import { afterEach, describe, expect, it } from "vitest";
import { apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { resetStrictDynamoDb, strictDynamoDb } from "#test/support/strict-dynamodb";

/**
 * Positions under production DynamoDB semantics (test/support/strict-dynamodb.ts): reports of one
 * vehicle racing for its latest position (the newest sample wins, whatever the order they commit
 * in), and the history's BatchWriteItem with throttled items coming back unprocessed (none lost).
 */
afterEach(() => {
  resetStrictDynamoDb();
});

async function van() {
  const { api, organizationId } = newTenant();
  const hub = (await api.post("/hub", { name: "Depot", address: "Jl. 1", lat: -6.2, lng: 106.8 })).body.data._id;
  const vehicle = (await api.post("/vehicle", { name: "Van", hubId: hub, assignee: "driver-1" })).body.data._id as string;
  const driver = apiClient(tokenFor({ organizationId, sub: "driver-1", permissions: ["add/vehicle-position", "view/vehicle"] }));
  return { api, hub, vehicle, driver };
}

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

describe("POST /vehicle/{vehicleId}/positions under contention", () => {
  it("two concurrent batches racing the latest position, five times: the newest sample wins every time", async () => {
    const { api, hub, vehicle, driver } = await van();
    let expectedNewest = "";
    for (let round = 0; round < 5; round++) {
      const base = 600 - round * 100;
      const older = [ago(base), ago(base - 10)];
      const newer = [ago(base - 20), ago(base - 30)];
      expectedNewest = newer[1] as string;
      // The newer batch is sent first in odd rounds, second in even ones.
      const batches = round % 2 === 0 ? [older, newer] : [newer, older];
      const answers = await Promise.all(
        batches.map((times) =>
          driver.post(`/vehicle/${vehicle}/positions`, {
            positions: times.map((at, i) => ({ at, lat: -6.2 - round / 100, lng: 106.8 + i / 100 })),
          }),
        ),
      );
      for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(202);
      const counts = answers.map((answer) => answer.body.data);
      expect(counts.reduce((sum, c) => sum + c.accepted + c.stale, 0)).toBe(4);
      expect(counts.reduce((sum, c) => sum + c.duplicates, 0)).toBe(0);
      const latest = (await api.get(`/vehicles/positions?hubId=${hub}`)).body.data[0].position;
      expect(latest.at).toBe(expectedNewest);
    }
    const track = (await api.get(`/vehicle/${vehicle}/positions?limit=100`)).body.data;
    expect(track).toHaveLength(20);
  });

  it("stores every sample when half of the history's BatchWriteItem items come back unprocessed", async () => {
    const { api, vehicle, driver } = await van();
    const semantics = resetStrictDynamoDb({ throttleRate: 0.5, throttleOperations: ["BatchWriteItem"] });
    const times = Array.from({ length: 20 }, (_, i) => ago(200 - i));
    const answer = await driver.post(`/vehicle/${vehicle}/positions`, { positions: times.map((at) => ({ at, lat: -6.2, lng: 106.8 })) });
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    expect(answer.body.data).toEqual({ accepted: 20, duplicates: 0, stale: 0 });
    expect(semantics.counters().throttledBatchItems).toBeGreaterThan(0);
    strictDynamoDb().configure({ throttleRate: 0 });
    const track = (await api.get(`/vehicle/${vehicle}/positions?limit=100`)).body.data;
    expect(track.map((sample: { at: string }) => sample.at)).toEqual(times);
  });
});
