import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { afterEach, describe, expect, it } from "vitest";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { type ApiClient, type ApiResponse, newTenant } from "#test/support/local-api";
import { refusal } from "#test/support/refusals";
import { resetStrictDynamoDb, strictDynamoDb } from "#test/support/strict-dynamodb";

/**
 * Writes without shared items (docs/architecture.md), under production DynamoDB semantics
 * (local/dynamodb-semantics.ts: a transaction holding its items, a ConditionCheck included, cancels
 * every other transaction naming one of them). Independent writes of one parent (records of one
 * type, vehicles and visits of one hub) succeed together and almost never meet a conflict; the races
 * the shared items used to decide (a parent deleted while children are written, unique values,
 * pickup-and-delivery pairs) are still decided exactly once.
 */
afterEach(() => {
  resetStrictDynamoDb();
});

async function created(api: ApiClient, path: string, body: Record<string, unknown>) {
  const response = await api.post(path, body);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data ?? response.body.data_type;
}

const hubBody = (name: string) => ({ name, address: `${name} street 1`, lat: -6.2, lng: 106.8 });
const statuses = (responses: ApiResponse[]) => responses.map((response) => response.status).sort();
const count = (responses: ApiResponse[], status: number) => responses.filter((response) => response.status === status).length;

/** Runs `burst` and answers its responses with the share of transaction attempts that carried a TransactionConflict reason. */
async function measured(burst: () => Promise<ApiResponse[]>) {
  const semantics = strictDynamoDb();
  semantics.resetCounters();
  const responses = await burst();
  const { transactions, transactionConflicts } = semantics.counters();
  return { responses, transactions, conflictShare: transactions === 0 ? 0 : transactionConflicts / transactions };
}

async function partitionItems(partition: string): Promise<number> {
  const output = await documentClient().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: "PK = :pk",
      ExpressionAttributeValues: { ":pk": partition },
      ConsistentRead: true,
      Select: "COUNT",
    }),
  );
  return output.Count ?? 0;
}

async function typeWithTitle(api: ApiClient, extra: Array<Record<string, unknown>> = []) {
  return (await created(api, "/data-type", { name: `T ${Math.random()}`, fields: [{ type: "title", title: "Name" }, ...extra] })) as {
    _id: string;
    name: string;
  };
}

describe("independent writes of one parent share no item", () => {
  it("50 concurrent record creates in one data type: 50 × 201, at most 10% of transaction attempts conflicted", async () => {
    const { api } = newTenant();
    const hub = await created(api, "/hub", hubBody("A"));
    const type = await typeWithTitle(api);
    const { responses, conflictShare, transactions } = await measured(() =>
      Promise.all(Array.from({ length: 50 }, (_, i) => api.post("/data", { dataTypeId: type._id, hubId: hub._id, dataId: `R${i}` }))),
    );
    expect(statuses(responses), JSON.stringify(responses.find((response) => response.status !== 201)?.body)).toEqual(Array(50).fill(201));
    expect(transactions).toBeGreaterThanOrEqual(50);
    expect(conflictShare).toBeLessThanOrEqual(0.1);
  });

  it("20 concurrent PATCHes of distinct records of one type: 20 × 200, at most 10% conflicted", async () => {
    const { api } = newTenant();
    const type = await typeWithTitle(api, [{ id: "note", title: "Note", type: "text", required: false, searchable: true }]);
    const hub = await created(api, "/hub", hubBody("A"));
    for (let i = 0; i < 20; i += 1) await created(api, "/data", { dataTypeId: type._id, hubId: hub._id, dataId: `R${i}` });
    const { responses, conflictShare } = await measured(() =>
      Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          api.patch(`/data/type/${encodeURIComponent(type.name)}/R${i}?hubId=${hub._id}`, { note: `changed ${i}` }),
        ),
      ),
    );
    expect(statuses(responses), JSON.stringify(responses.find((response) => response.status !== 200)?.body)).toEqual(Array(20).fill(200));
    expect(conflictShare).toBeLessThanOrEqual(0.1);
  });

  it.each(["/visit", "/vehicle"])(
    "50 concurrent %s creates in one hub: 50 × 201, at most 10% conflicted, and the hub then refuses its delete",
    async (path) => {
      const { api } = newTenant();
      const hub = await created(api, "/hub", hubBody("A"));
      const body = (i: number) =>
        path === "/visit" ? { hubId: hub._id, name: `V${i}`, coordinate: "-6.19,106.82" } : { hubId: hub._id, name: `Van ${i}` };
      const { responses, conflictShare } = await measured(() => Promise.all(Array.from({ length: 50 }, (_, i) => api.post(path, body(i)))));
      expect(statuses(responses), JSON.stringify(responses.find((response) => response.status !== 201)?.body)).toEqual(Array(50).fill(201));
      expect(conflictShare).toBeLessThanOrEqual(0.1);
      const before = await api.get(`/hub/${hub._id}`);
      const refused = await api.delete(`/hub/${hub._id}`);
      expect(refusal(refused)).toEqual({ status: 409, failedCode: "hub-409" });
      expect(refused.body.message).toContain(path === "/visit" ? "50 visits" : "50 vehicles");
      expect((await api.get(`/hub/${hub._id}`)).body).toEqual(before.body);
    },
  );
});

describe("races the shared items used to decide", () => {
  it("50-way same dataId: exactly one 201, the rest 409 (or 503)", async () => {
    const { api } = newTenant();
    const type = await typeWithTitle(api);
    const hub = await created(api, "/hub", hubBody("A"));
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => api.post("/data", { dataTypeId: type._id, hubId: hub._id, dataId: "same" })),
    );
    // Writers of one value are a real hot item: each loser is a 409, or a 503 when the contention
    // retries spent their budget first (nothing written either way).
    expect(count(responses, 201), JSON.stringify(statuses(responses))).toBe(1);
    expect(count(responses, 409) + count(responses, 503), JSON.stringify(statuses(responses))).toBe(49);
  });

  it("50-way same unique value: exactly one 201, the rest 409 (or 503)", async () => {
    const { api } = newTenant();
    const type = await typeWithTitle(api, [{ id: "email", title: "Email", type: "text", required: false, unique: true }]);
    const hub = await created(api, "/hub", hubBody("A"));
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        api.post("/data", { dataTypeId: type._id, hubId: hub._id, dataId: `R${i}`, email: "one@example.com" }),
      ),
    );
    // Writers of one value are a real hot item: each loser is a 409, or a 503 when the contention
    // retries spent their budget first (nothing written either way).
    expect(count(responses, 201), JSON.stringify(statuses(responses))).toBe(1);
    expect(count(responses, 409) + count(responses, 503), JSON.stringify(statuses(responses))).toBe(49);
  });

  it.each([1, 2, 3])("data type delete vs 20 record creates (round %i): no record outlives its type", async () => {
    const { api, organizationId } = newTenant();
    const type = await typeWithTitle(api);
    const creates = Array.from({ length: 20 }, (_, i) => api.post("/data", { dataTypeId: type._id, dataId: `R${i}` }));
    const [deleted, ...responses] = await Promise.all([api.delete(`/data-type/${type._id}`), ...creates]);
    const stored = await partitionItems(keys.recordPartition(organizationId, type._id));
    if (deleted.status === 200) {
      expect(stored).toBe(0);
      expect(refusal(await api.get(`/data-type/${type._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
    } else {
      // Refused because records exist (dt-004), or because one landed between its read and its write (sys-410): the type stays.
      expect(refusal(deleted), JSON.stringify(deleted.body)).toEqual({
        status: 409,
        failedCode: expect.stringMatching(/^(dt-004|sys-410)$/),
      });
      expect((await api.get(`/data-type/${type._id}`)).body.data_type).toMatchObject({ _id: type._id, name: type.name });
      expect(stored).toBe(count(responses, 201));
    }
    for (const response of responses) expect([201, 400, 409]).toContain(response.status);
  });

  it.each(["/visit", "/vehicle"])("hub delete vs 20 %s creates: no child names a deleted hub", async (path) => {
    for (let round = 0; round < 3; round += 1) {
      const { api } = newTenant();
      const hub = await created(api, "/hub", hubBody("A"));
      const body = (i: number) =>
        path === "/visit" ? { hubId: hub._id, name: `V${i}`, coordinate: "-6.19,106.82" } : { hubId: hub._id, name: `Van ${i}` };
      const [deleted, ...responses] = await Promise.all([
        api.delete(`/hub/${hub._id}`),
        ...Array.from({ length: 20 }, (_, i) => api.post(path, body(i))),
      ]);
      const listed = (await api.get(`${path === "/visit" ? "/visits" : "/vehicles"}?limit=100`)).body.data as unknown[];
      if (deleted.status === 200) {
        expect(listed).toHaveLength(0);
        expect(refusal(await api.get(`/hub/${hub._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      } else {
        // Refused because a child exists (hub-409), or because one landed between its read and its write (sys-410): the hub stays.
        expect(refusal(deleted), JSON.stringify(deleted.body)).toEqual({
          status: 409,
          failedCode: expect.stringMatching(/^(hub-409|sys-410)$/),
        });
        expect((await api.get(`/hub/${hub._id}`)).body.data).toMatchObject({ _id: hub._id, name: hub.name });
        expect(listed).toHaveLength(count(responses, 201));
      }
      for (const response of responses) expect([201, 400], JSON.stringify(response.body)).toContain(response.status);
    }
  });
});

describe("pickup-and-delivery pairs are decided inside the pair's transaction", () => {
  async function hubWithVisits(api: ApiClient, names: string[]) {
    const hub = await created(api, "/hub", hubBody("A"));
    const other = await created(api, "/hub", hubBody("B"));
    const visits: string[] = [];
    for (const name of names) visits.push((await created(api, "/visit", { hubId: hub._id, name, coordinate: "-6.19,106.82" }))._id);
    return { hub: hub._id as string, other: other._id as string, visits };
  }

  /** The pair invariants over every visit of the organization. */
  async function assertPairsHold(api: ApiClient) {
    const visits = (await api.get("/visits?limit=100")).body.data as Array<{ _id: string; hubId: string; pickupVisitId: string | null }>;
    const byId = new Map(visits.map((visit) => [visit._id, visit]));
    const claimed = new Set<string>();
    for (const visit of visits) {
      if (visit.pickupVisitId === null) continue;
      const pickup = byId.get(visit.pickupVisitId);
      expect(pickup, `delivery ${visit._id} names a pickup that is gone`).toBeDefined();
      expect(pickup?.hubId).toBe(visit.hubId);
      expect(pickup?.pickupVisitId, "a pickup is not itself a delivery").toBeNull();
      expect(claimed.has(visit.pickupVisitId), "a pickup has one delivery").toBe(false);
      claimed.add(visit.pickupVisitId);
    }
  }

  it.each([1, 2, 3, 4, 5])("two deliveries claiming one pickup (round %i): one wins", async () => {
    const { api } = newTenant();
    const { visits } = await hubWithVisits(api, ["P", "D1", "D2"]);
    const [p, d1, d2] = visits as [string, string, string];
    const responses = await Promise.all([api.patch(`/visit/${d1}`, { pickupVisitId: p }), api.patch(`/visit/${d2}`, { pickupVisitId: p })]);
    expect(count(responses, 200)).toBe(1);
    expect(count(responses, 400)).toBe(1);
    await assertPairsHold(api);
  });

  it.each([1, 2, 3, 4, 5])("pairing D with P while P moves hub, is deleted, or pairs with Q (round %i): the pair rules hold", async () => {
    const { api } = newTenant();
    const { other, visits } = await hubWithVisits(api, ["P", "D", "Q", "R", "S", "T"]);
    const [p, d, q] = visits as [string, string, string];
    // P moves hub
    await Promise.all([api.patch(`/visit/${d}`, { pickupVisitId: p }), api.patch(`/visit/${p}`, { hubId: other })]);
    await assertPairsHold(api);
    // P (if still free of D) pairs with Q while another delivery pairs with P
    const [, , r] = visits.slice(2) as [string, string, string];
    await Promise.all([api.patch(`/visit/${p}`, { pickupVisitId: q }), api.patch(`/visit/${r}`, { pickupVisitId: p })]);
    await assertPairsHold(api);
    // S pairs with T while T is deleted
    const [s, t] = visits.slice(4) as [string, string];
    const [paired, deleted] = await Promise.all([api.patch(`/visit/${s}`, { pickupVisitId: t }), api.delete(`/visit/${t}`)]);
    expect(paired.status === 200 && deleted.status === 200, "both the pairing and the pickup's delete succeeded").toBe(false);
    await assertPairsHold(api);
    // D stays editable whatever happened
    expect((await api.patch(`/visit/${d}`, { name: "D renamed" })).status).toBe(200);
  });
});
