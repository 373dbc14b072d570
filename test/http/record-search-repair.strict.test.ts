import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { afterEach, describe, expect, it } from "vitest";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { createDynamoRecordStore } from "#shared/store/record-store";
import { type ApiClient, newTenant } from "#test/support/local-api";
import { resetStrictDynamoDb, strictDynamoDb } from "#test/support/strict-dynamodb";

/**
 * Search tokens are written outside the record's transaction (shared/store/record-tokens.ts), so
 * under production semantics their writes can be throttled while the record commits. These tests
 * throttle exactly the token writes (PutItem: new tokens before the transaction; DeleteItem: old
 * ones after it; records themselves are TransactWriteItems) and show that search stays right:
 * a record whose tokens failed is found by `q`, with and without a type (the organization's next
 * search re-indexes it first);
 * a token left behind by a delete or a rename never answers for the record.
 */
afterEach(() => {
  resetStrictDynamoDb();
});

async function searchType(api: ApiClient) {
  const response = await api.post("/data-type", {
    name: `Customers ${Math.random()}`,
    commonData: true,
    fields: [
      { type: "title", title: "Name" },
      { id: "notes", title: "Notes", type: "text", required: false, searchable: true },
    ],
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data_type as { _id: string; name: string };
}

/** The dataIds `q` answers: with the type, and across every type of the organization. */
async function found(api: ApiClient, dataTypeId: string, q: string) {
  const typed = await api.get(`/data?dataTypeId=${dataTypeId}&q=${encodeURIComponent(q)}`);
  const untyped = await api.get(`/data?q=${encodeURIComponent(q)}`);
  expect(typed.status, JSON.stringify(typed.body)).toBe(200);
  expect(untyped.status, JSON.stringify(untyped.body)).toBe(200);
  const ids = (body: { data: Array<{ dataId: string }> }) => body.data.map((item) => item.dataId).sort();
  return { typed: ids(typed.body), untyped: ids(untyped.body) };
}

const markerOf = async (organizationId: string, recordId: string) =>
  (
    await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.searchRepairMarker(organizationId, recordId), ConsistentRead: true }),
    )
  ).Item;

/** Token items of a word prefix that name this dataId (read from the table, not through search). */
async function tokenItems(organizationId: string, word: string, dataId: string) {
  const output = await documentClient().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :word)",
      ExpressionAttributeValues: { ":pk": keys.organizationTokenPartition(organizationId, word), ":word": word },
      ConsistentRead: true,
    }),
  );
  return (output.Items ?? []).filter((item) => item.dataId === dataId);
}

describe("search tokens outside the record's transaction, under throttling", () => {
  it("a record whose token writes are throttled is stored, and found by q with and without a type after the search's repair", async () => {
    const { api, organizationId } = newTenant();
    const type = await searchType(api);
    const semantics = strictDynamoDb();
    semantics.configure({ throttleRate: 1, throttleOperations: ["PutItem"] });
    semantics.resetCounters();
    const created = await api.post("/data", { dataTypeId: type._id, dataId: "Zephyr Logistics", notes: "quartz" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(semantics.counters().throttledCalls).toBeGreaterThan(0);
    resetStrictDynamoDb();

    // The record is stored without its tokens (the throttle was real) but with its repair marker.
    const recordId: string = created.body.data._id;
    expect(await tokenItems(organizationId, "quartz", "Zephyr Logistics")).toEqual([]);
    expect(await markerOf(organizationId, recordId)).toBeDefined();
    // The next q of the organization re-indexes it before answering: found with and without a type.
    expect(await found(api, type._id, "quartz")).toEqual({ typed: ["Zephyr Logistics"], untyped: ["Zephyr Logistics"] });
    expect(await markerOf(organizationId, recordId)).toBeUndefined();
    for (const q of ["zeph", "logistics"])
      expect(await found(api, type._id, q)).toEqual({ typed: ["Zephyr Logistics"], untyped: ["Zephyr Logistics"] });

    // An edit whose one new word's token is throttled: the other words keep answering, the new one
    // once a search (of any word: here an untyped one first) has repaired it.
    strictDynamoDb().configure({ throttleRate: 1, throttleOperations: ["PutItem"] });
    const path = `/data/type/${encodeURIComponent(type.name)}/${encodeURIComponent("Zephyr Logistics")}`;
    const edited = await api.patch(path, { notes: "quartz basalt" });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    resetStrictDynamoDb();
    expect(await tokenItems(organizationId, "basalt", "Zephyr Logistics")).toEqual([]);
    expect(await markerOf(organizationId, recordId)).toBeDefined();
    const untyped = await api.get("/data?q=quartz");
    expect(untyped.body.data.map((item: { dataId: string }) => item.dataId)).toEqual(["Zephyr Logistics"]);
    expect(await markerOf(organizationId, recordId)).toBeUndefined();
    expect(await found(api, type._id, "basalt")).toEqual({ typed: ["Zephyr Logistics"], untyped: ["Zephyr Logistics"] });
  });

  it("no token left by a throttled delete or rename answers for the record, and a search removes them once old", async () => {
    const { api, organizationId } = newTenant();
    const type = await searchType(api);
    expect((await api.post("/data", { dataTypeId: type._id, dataId: "Old Name", notes: "granite" })).status).toBe(201);
    expect(await found(api, type._id, "granite")).toEqual({ typed: ["Old Name"], untyped: ["Old Name"] });

    // Renamed while every token delete is throttled: the old key's tokens stay in the table.
    const semantics = strictDynamoDb();
    semantics.configure({ throttleRate: 1, throttleOperations: ["DeleteItem"] });
    semantics.resetCounters();
    const renamed = await api.patch(`/data/type/${encodeURIComponent(type.name)}/${encodeURIComponent("Old Name")}`, {
      dataId: "New Name",
    });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(semantics.counters().throttledCalls).toBeGreaterThan(0);
    expect(await tokenItems(organizationId, "old", "Old Name")).toHaveLength(1);
    expect(await found(api, type._id, "old")).toEqual({ typed: [], untyped: [] });
    expect(await found(api, type._id, "granite")).toEqual({ typed: ["New Name"], untyped: ["New Name"] });
    expect(await found(api, type._id, "new")).toEqual({ typed: ["New Name"], untyped: ["New Name"] });

    // Deleted, its token deletes throttled too: nothing answers, though the token items are still there.
    const deleted = await api.delete(`/data/type/${encodeURIComponent(type.name)}/${encodeURIComponent("New Name")}`);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(await tokenItems(organizationId, "granite", "New Name")).toHaveLength(1);
    for (const q of ["granite", "new", "old", "name"]) expect(await found(api, type._id, q)).toEqual({ typed: [], untyped: [] });
    resetStrictDynamoDb();

    // A search that meets stale tokens older than the grace deletes them (grace 0 here: every stale token is old).
    const search = createDynamoRecordStore({ repairGraceMs: 0 });
    for (const word of ["granite", "name", "old"]) {
      const page = await search.searchOrganization(organizationId, { indexWord: word, limit: 100 });
      expect(page.hits).toEqual([]);
    }
    expect(await tokenItems(organizationId, "granite", "New Name")).toEqual([]);
    expect(await tokenItems(organizationId, "granite", "Old Name")).toEqual([]);
    expect(await tokenItems(organizationId, "old", "Old Name")).toEqual([]);
  });
});
