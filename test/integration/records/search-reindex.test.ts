import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { dataTypeReader } from "#shared/app/data-types";
import type { Caller } from "#shared/domain/caller";
import { createRecordService } from "#shared/domain/records/service";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { createDynamoRecordStore, reindexOrganization } from "#shared/store/record-store";
import { newTenant } from "#test/support/local-api";

/**
 * The search token layout migration (docs/operations.md, "Search token layout"): a record written
 * before it (token items in its type's partition, no `searchLayout`) is not found by `q` until the
 * backfill (`npm run reindex-search`, reindexOrganization) wrote its tokens in this layout; the
 * backfill also deletes the old token items, and a second run finds nothing to do.
 */
describe("search token layout backfill", () => {
  it("re-indexes a record of the earlier layout: found by q with and without a type, old token items gone", async () => {
    const { api, organizationId } = newTenant();
    const created = await api.post("/data-type", { name: "Legacy things", commonData: true, fields: [{ type: "title", title: "Name" }] });
    expect(created.status).toBe(201);
    const dataTypeId: string = created.body.data_type._id;
    const caller: Caller = { userId: "u", organizationId, hubIds: [], permissions: new Set(), permissionDetails: [] };
    const unused = async () => false;
    const service = createRecordService({
      store: createDynamoRecordStore(),
      dataTypes: dataTypeReader,
      entities: { hubExists: unused, vehicleExists: unused },
      external: { fetchItems: async () => [] },
    });
    const record = await service.create(caller, { dataTypeId, dataId: "Walrus" });

    // Turn it into a record of the earlier layout: no searchLayout, its token in the type's partition.
    const recordKey = keys.record(organizationId, dataTypeId, "*", "Walrus");
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: recordKey,
        UpdateExpression: "REMOVE #index.searchLayout",
        ExpressionAttributeNames: { "#index": "index" },
      }),
    );
    await documentClient().send(
      new DeleteCommand({ TableName: tableName(), Key: keys.searchToken(organizationId, "walrus", dataTypeId, "*", "Walrus") }),
    );
    const legacyKey = keys.legacyRecordToken(organizationId, dataTypeId, "walrus", record._id as string);
    await documentClient().send(
      new PutCommand({ TableName: tableName(), Item: { ...legacyKey, entity: "recordToken", recordId: record._id } }),
    );
    const search = () =>
      Promise.all([service.list(caller, { dataTypeId, q: "walr", limit: 10 }), service.list(caller, { q: "walr", limit: 10 })]).then(
        (pages) => pages.map((page) => page.items.map((item) => item.dataId)),
      );
    expect(await search()).toEqual([[], []]);

    const first = await reindexOrganization(organizationId);
    expect(first).toEqual({ records: 1, reindexed: 1, failed: 0 });
    expect(await search()).toEqual([["Walrus"], ["Walrus"]]);
    const legacy = await documentClient().send(new GetCommand({ TableName: tableName(), Key: legacyKey, ConsistentRead: true }));
    expect(legacy.Item).toBeUndefined();

    // The record's next write moves it to this layout for good: a second backfill re-indexes nothing.
    const path = { dataTypeName: "Legacy things", dataId: "Walrus" };
    const patched = await api.patch(`/data/type/${encodeURIComponent(path.dataTypeName)}/${path.dataId}`, { dataId: "Walrus" });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(await reindexOrganization(organizationId)).toEqual({ records: 1, reindexed: 0, failed: 0 });
    const tokens = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: "PK = :pk",
        ExpressionAttributeValues: { ":pk": keys.organizationTokenPartition(organizationId, "w") },
        ConsistentRead: true,
      }),
    );
    expect(tokens.Items?.map((item) => item.SK)).toEqual([keys.searchToken(organizationId, "walrus", dataTypeId, "*", "Walrus").SK]);
  });
});
