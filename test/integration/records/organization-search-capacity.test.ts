import { describe, expect, it } from "vitest";
import { dataTypeReader } from "#shared/app/data-types";
import type { Caller } from "#shared/domain/caller";
import { createRecordService } from "#shared/domain/records/service";
import { createDynamoRecordStore } from "#shared/store/record-store";
import { capacityMeter, loadInBatches } from "#test/integration/records/capacity-loader";
import { newTenant } from "#test/support/local-api";

/**
 * The search without a data type (GET /data?q=…): among 1,000 records of three types, a `q` query
 * reads the organization-wide token entries of the matching words (GSI1 of the same token items)
 * and the matching records — not the types' other records. Capacity comes from DynamoDB
 * (ReturnConsumedCapacity: TOTAL) through the store's recorder; the data types of the page are
 * read besides (one GetItem per distinct type, at most 0.5 unit each, not counted here).
 */
const RECORDS = 1_000;
const TYPES = ["Catalog", "Supplier", "Warehouse"];

describe("Record search across data types: read cost", () => {
  it(`reads only what a q query without a type returns, among ${RECORDS} records of ${TYPES.length} types`, async () => {
    const { api, organizationId } = newTenant();
    const typeIds: string[] = [];
    for (const name of TYPES) {
      const created = await api.post("/data-type", {
        name,
        commonData: true,
        fields: [
          { type: "title", title: "Name" },
          { id: "description", title: "Description", type: "text", required: false, searchable: true },
        ],
      });
      expect(created.status).toBe(201);
      typeIds.push(created.body.data_type._id);
    }

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
    // Records 7, 340, 673 (one per type) mention a zebra; every record mentions common words.
    await loadInBatches(RECORDS, 50, (index) =>
      loader.create(caller, {
        dataTypeId: typeIds[index % TYPES.length],
        dataId: `Item ${String(index).padStart(4, "0")}`,
        description: index % 333 === 7 ? "rare zebra pattern" : `common product number ${index} in stock`,
      }),
    );

    const searchMeter = capacityMeter();
    const searched = await service(createDynamoRecordStore({ recorder: searchMeter.recorder })).list(caller, { q: "zeb", limit: 100 });
    expect(searched.items.map((item) => item.dataId).sort()).toEqual(["Item 0007", "Item 0340", "Item 0673"]);
    expect(new Set(searched.items.map((item) => item.dataTypeId))).toEqual(
      new Set(typeIds.filter((_, i) => [7, 340, 673].some((n) => n % 3 === i))),
    );
    for (const item of searched.items)
      expect(item.data_type).toEqual({ _id: item.dataTypeId, name: TYPES[typeIds.indexOf(item.dataTypeId as string)] });
    expect(searched.nextCursor).toBeNull();

    // One read of a few small token items and one of the (empty) repair markers: at most one unit; each returned record one unit at most.
    expect(searchMeter.used.Query).toBeGreaterThan(0);
    expect(searchMeter.used.Query).toBeLessThanOrEqual(1);
    expect(searchMeter.used.BatchGetItem).toBeLessThanOrEqual(3);

    // A frequent word pages with one cursor across the types, each page's cost bounded by its size.
    const pageMeter = capacityMeter();
    const pager = service(createDynamoRecordStore({ recorder: pageMeter.recorder }));
    const seen = new Set<string>();
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await pager.list(caller, { q: "common", limit: 100, cursor });
      for (const item of page.items) seen.add(item._id);
      cursor = page.nextCursor ?? undefined;
      pages += 1;
    } while (cursor);
    expect(seen.size).toBe(RECORDS - 3);
    expect(pages).toBeGreaterThanOrEqual(10);

    // A q that matches nothing reads (almost) nothing, however large the organization.
    const emptyMeter = capacityMeter();
    const none = await service(createDynamoRecordStore({ recorder: emptyMeter.recorder })).list(caller, { q: "unicorn", limit: 100 });
    expect(none.items).toEqual([]);
    // Two minimal reads: the word's token range and the organization's (empty) search repair markers.
    expect(emptyMeter.total()).toBeLessThanOrEqual(1);
  }, 300_000); // loads 1,000 records through the service: minutes on a busy 2-core machine
});
