import { describe, expect, it } from "vitest";
import { dataTypeReader } from "#shared/app/data-types";
import type { Caller } from "#shared/domain/caller";
import { createRecordService } from "#shared/domain/records/service";
import { createDynamoRecordStore } from "#shared/store/record-store";
import { capacityMeter, loadInBatches } from "#test/integration/records/capacity-loader";
import { newTenant } from "#test/support/local-api";

/**
 * The search proof: with 1,000+ records of a type, a `q` query consumes read capacity for what it
 * returns (a handful of token items and the matching records), while listing the type reads
 * everything. Capacity comes from DynamoDB (ReturnConsumedCapacity: TOTAL) through the store's
 * recorder.
 */
const RECORDS = 1_000;
const MATCHES = 4;

describe("Record search read cost", () => {
  it(`reads only what a q query returns, among ${RECORDS} records`, async () => {
    const { api, organizationId } = newTenant();
    const created = await api.post("/data-type", {
      name: "Catalog",
      commonData: true,
      fields: [
        { type: "title", title: "Name" },
        { id: "description", title: "Description", type: "text", required: false, searchable: true },
      ],
    });
    expect(created.status).toBe(201);
    const dataTypeId: string = created.body.data_type._id;

    const caller: Caller = { userId: "loader", organizationId, hubIds: [], permissions: new Set(), permissionDetails: [] };
    const unused = async () => false;
    const service = (store = createDynamoRecordStore()) =>
      createRecordService({
        store,
        dataTypes: dataTypeReader,
        entities: { hubExists: unused, vehicleExists: unused },
        external: { fetchItems: async () => [] },
      });
    const loader = service();
    await loadInBatches(RECORDS, 50, (index) =>
      loader.create(caller, {
        dataTypeId,
        dataId: `Item ${String(index).padStart(4, "0")}`,
        description: index % (RECORDS / MATCHES) === 7 ? "rare zebra pattern" : `common product number ${index} in stock`,
      }),
    );

    const searchMeter = capacityMeter();
    const searched = await service(createDynamoRecordStore({ recorder: searchMeter.recorder })).list(caller, {
      dataTypeId,
      q: "zeb",
      limit: 100,
    });
    expect(searched.items.map((item) => item.dataId).sort()).toEqual(["Item 0007", "Item 0257", "Item 0507", "Item 0757"]);
    expect(searched.nextCursor).toBeNull();

    const listMeter = capacityMeter();
    const lister = service(createDynamoRecordStore({ recorder: listMeter.recorder }));
    let cursor: string | undefined;
    let listed = 0;
    do {
      const page = await lister.list(caller, { dataTypeId, limit: 100, cursor });
      listed += page.items.length;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(listed).toBe(RECORDS);

    // DynamoDB reports capacity per 4 KB read (eventually consistent: 0.5 unit), so the token range
    // read of 4 small items and the (empty) repair marker read are one unit at most, and each
    // returned record one unit at most.
    expect(searchMeter.used.Query).toBeGreaterThan(0);
    expect(searchMeter.used.Query).toBeLessThanOrEqual(1);
    expect(searchMeter.used.BatchGetItem).toBeLessThanOrEqual(MATCHES);
    // Listing the type is what a scan-like search would have cost: at least 10 times more here.
    expect(listMeter.total()).toBeGreaterThanOrEqual(10 * searchMeter.total());

    // A q that matches nothing reads (almost) nothing, however large the type.
    const emptyMeter = capacityMeter();
    const none = await service(createDynamoRecordStore({ recorder: emptyMeter.recorder })).list(caller, {
      dataTypeId,
      q: "unicorn",
      limit: 100,
    });
    expect(none.items).toEqual([]);
    // Two minimal reads: the word's token range and the organization's (empty) search repair markers.
    expect(emptyMeter.total()).toBeLessThanOrEqual(1);
  }, 300_000); // loads 1,000 records through the service (each with its own token writes): minutes on a busy 2-core machine
});
