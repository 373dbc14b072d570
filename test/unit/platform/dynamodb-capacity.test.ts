import { describe, expect, it } from "vitest";
import { costOf, indexWriteUnits, itemSize } from "#local/dynamodb-capacity";
import type { CapturedCall, Item } from "#local/dynamodb-semantics";

const indexes = [{ indexName: "GSI1", partitionKey: "GSI1PK", sortKey: "GSI1SK" }];
const s = (value: string) => ({ S: value });
const item = (extra: Record<string, { S: string }> = {}): Item => ({ PK: s("p"), SK: s("s"), ...extra });
const write = (operation: string, items: CapturedCall["items"], status = 200): CapturedCall => ({
  operation,
  request: {},
  status,
  response: {},
  items,
});

describe("write units from captured calls", () => {
  it("sizes an item by its attribute names and values", () => {
    expect(itemSize({ PK: s("abc"), n: { N: "12345" }, flag: { BOOL: true } })).toBe(2 + 3 + 1 + 4 + 4 + 1);
  });

  it("a plain put is 1 WRU per started KB of the larger image; in a transaction, 2", () => {
    const big = item({ body: s("x".repeat(1500)) });
    const put = { table: "t", key: {}, action: "Put", after: big };
    expect(costOf(write("PutItem", [put]), indexes).writeUnits).toBe(2);
    expect(costOf(write("TransactWriteItems", [put]), indexes).writeUnits).toBe(4);
  });

  it("a ConditionCheck costs 2 per KB of the checked item and writes no index entry", () => {
    const checked = item({ GSI1PK: s("g"), GSI1SK: s("1") });
    const cost = costOf(
      write("TransactWriteItems", [{ table: "t", key: {}, action: "ConditionCheck", before: checked, after: checked }]),
      indexes,
    );
    expect(cost).toMatchObject({ writeUnits: 2, indexWriteUnits: 0 });
  });

  it("index entries: a put into the index is one write, a key change is a delete plus a put, an unchanged item none", () => {
    const before = item({ GSI1PK: s("a"), GSI1SK: s("1") });
    expect(indexWriteUnits(indexes, undefined, before)).toBe(1);
    expect(indexWriteUnits(indexes, before, { ...before, GSI1PK: s("b") })).toBe(2);
    expect(indexWriteUnits(indexes, before, { ...before, name: s("n") })).toBe(1);
    expect(indexWriteUnits(indexes, before, before)).toBe(0);
    expect(indexWriteUnits(indexes, before, undefined)).toBe(1);
    expect(indexWriteUnits(indexes, item(), item({ name: s("n") }))).toBe(0);
  });

  it("reads: ½ per 4 KB eventually consistent, 1 strongly, 2 in a transaction", () => {
    const read = (operation: string, consistent: boolean): CapturedCall => ({
      ...write(operation, [{ table: "t", key: {}, action: "Read", after: item({ body: s("x".repeat(5000)) }) }]),
      consistent,
    });
    expect(costOf(read("GetItem", false), indexes).readUnits).toBe(1);
    expect(costOf(read("GetItem", true), indexes).readUnits).toBe(2);
    expect(costOf(read("TransactGetItems", false), indexes).readUnits).toBe(4);
  });
});

/**
 * The pricing rule by rule, against the developer guide ("Item sizes and formats"; "DynamoDB read
 * and write operations"; "Capacity management for transactions"; "Provisioned throughput
 * considerations for global secondary indexes"), at the boundaries where a wrong constant or a
 * wrong image shows. Two global secondary indexes, projection ALL (the table's own).
 */
describe("the pricing rules, one by one", () => {
  const twoIndexes = [
    { indexName: "GSI1", partitionKey: "GSI1PK", sortKey: "GSI1SK" },
    { indexName: "GSI2", partitionKey: "GSI2PK" },
  ];
  const base = { PK: s("p"), SK: s("s") }; // 2 + 1 + 2 + 1 = 6 bytes
  /** An item of exactly `bytes` bytes (attribute names and values), with `extra` attributes. */
  const sized = (bytes: number, extra: Item = {}): Item => {
    const fixed = itemSize({ ...base, ...extra, pad: s("") });
    return { ...base, ...extra, pad: s("x".repeat(bytes - fixed)) };
  };
  const captured = (operation: string, items: CapturedCall["items"], extra: Partial<CapturedCall> = {}): CapturedCall => ({
    ...write(operation, items),
    ...extra,
  });
  const one = (action: string, before?: Item, after?: Item) => ({ table: "t", key: {}, action, before, after });
  const keysOf = (index: 1 | 2, value: string): Item => (index === 1 ? { GSI1PK: s(value), GSI1SK: s("1") } : { GSI2PK: s(value) });

  describe("item size", () => {
    it("strings are their UTF-8 bytes, attribute names included", () => {
      expect(itemSize({ name: s("é€") })).toBe(4 + 2 + 3);
      expect(itemSize({ 名: s("") })).toBe(3);
    });

    it("numbers: 1 byte per 2 significant digits (leading and trailing zeros trimmed) plus 1, a negative number 1 more", () => {
      expect(itemSize({ n: { N: "12345" } })).toBe(1 + 3 + 1);
      expect(itemSize({ n: { N: "1000" } })).toBe(1 + 1 + 1);
      expect(itemSize({ n: { N: "0.00125" } })).toBe(1 + 2 + 1);
      expect(itemSize({ n: { N: "-1.5" } })).toBe(1 + 1 + 1 + 1);
      expect(itemSize({ n: { N: "12345678901234567890123456789012345678" } })).toBe(1 + 19 + 1);
      expect(itemSize({ n: { N: "0" } })).toBe(1 + 1 + 1);
    });

    it("lists and maps: 3 bytes each plus 1 byte per element (and a map element's name), nested alike", () => {
      expect(itemSize({ l: { L: [] } })).toBe(1 + 3);
      expect(itemSize({ l: { L: [s("ab"), { N: "7" }] } })).toBe(1 + 3 + (1 + 2) + (1 + 2));
      expect(itemSize({ m: { M: {} } })).toBe(1 + 3);
      expect(itemSize({ m: { M: { ab: s("xyz") } } })).toBe(1 + 3 + 1 + 2 + 3);
      expect(itemSize({ m: { M: { a: { L: [{ BOOL: true }, { NULL: true }] } } } })).toBe(1 + 3 + 1 + 1 + (3 + (1 + 1) + (1 + 1)));
    });

    it("booleans and null are 1 byte, binaries their bytes, sets the sum of their members", () => {
      expect(itemSize({ b: { BOOL: false }, z: { NULL: true } })).toBe(1 + 1 + 1 + 1);
      expect(itemSize({ b: { B: Buffer.from([1, 2, 3]).toString("base64") as unknown as Uint8Array } })).toBe(1 + 3);
      expect(itemSize({ ss: { SS: ["a", "bc"] }, ns: { NS: ["1", "22"] } })).toBe(2 + 3 + 2 + (2 + 2));
    });
  });

  describe("writes", () => {
    it("1 KB is 1,024 bytes: 1,024 bytes is 1 WRU, 1,025 bytes 2; 4,096 is 4 and 4,097 is 5", () => {
      expect(itemSize(sized(1024))).toBe(1024);
      const put = (bytes: number) => costOf(captured("PutItem", [one("Put", undefined, sized(bytes))]), []).writeUnits;
      expect([put(20), put(1024), put(1025), put(4096), put(4097)]).toEqual([1, 1, 2, 4, 5]);
    });

    it("an update or put is charged on the larger image: shrinking 3,000 → 500 bytes is 3 WRU, growing 500 → 3,000 too", () => {
      const update = (before: number, after: number) =>
        costOf(captured("UpdateItem", [one("Update", sized(before), sized(after))]), []).writeUnits;
      expect(update(3000, 500)).toBe(3);
      expect(update(500, 3000)).toBe(3);
      expect(costOf(captured("PutItem", [one("Put", sized(2100), sized(10))]), []).writeUnits).toBe(3);
    });

    it("a delete is charged on the deleted item; a delete of nothing 1 WRU", () => {
      expect(costOf(captured("DeleteItem", [one("Delete", sized(2100), undefined)]), []).writeUnits).toBe(3);
      expect(costOf(captured("DeleteItem", [one("Delete", undefined, undefined)]), []).writeUnits).toBe(1);
    });

    it("a failed condition still consumes the write, on the item as it is, and writes no index entry", () => {
      const stored = sized(2100, keysOf(1, "a"));
      const refused = costOf({ ...captured("PutItem", [one("Put", stored, stored)]), status: 400 }, twoIndexes);
      expect(refused).toMatchObject({ writeUnits: 3, indexWriteUnits: 0 });
      const onNothing = costOf({ ...captured("UpdateItem", [one("Update", undefined, undefined)]), status: 400 }, twoIndexes);
      expect(onNothing).toMatchObject({ writeUnits: 1, indexWriteUnits: 0 });
      // Images that differ (another write landed between them) are not this refused call's index writes.
      const raced = costOf({ ...captured("PutItem", [one("Put", undefined, stored)]), status: 400 }, twoIndexes);
      expect(raced).toMatchObject({ writeUnits: 3, indexWriteUnits: 0 });
    });

    it("two indexes: a new item in both is one index write each, sized by the item", () => {
      const item = sized(1500, { ...keysOf(1, "a"), ...keysOf(2, "b") });
      expect(costOf(captured("PutItem", [one("Put", undefined, item)]), twoIndexes)).toMatchObject({
        writeUnits: 2 + 2 + 2,
        indexWriteUnits: 4,
      });
    });

    it("a key change is a delete of the old entry (old size) plus a put of the new (new size); an index whose key stays is one write of the new entry", () => {
      const before = sized(1500, { ...keysOf(1, "a"), ...keysOf(2, "b") });
      const after = sized(2100, { ...keysOf(1, "moved"), ...keysOf(2, "b") });
      // GSI1: delete 2 + put 3; GSI2: put of the new entry 3.
      expect(indexWriteUnits(twoIndexes, before, after)).toBe(2 + 3 + 3);
      expect(costOf(captured("UpdateItem", [one("Update", before, after)]), twoIndexes)).toMatchObject({
        writeUnits: 3 + 8,
        indexWriteUnits: 8,
      });
      // Shrinking in place: the entry written is the new one.
      expect(indexWriteUnits(twoIndexes, sized(3000, keysOf(2, "b")), sized(500, keysOf(2, "b")))).toBe(1);
    });

    it("an item leaving an index is one delete sized by the old entry; entering, one put sized by the new; in neither, nothing", () => {
      const keyed = sized(2100, keysOf(1, "a"));
      const unkeyed = sized(500);
      expect(indexWriteUnits(twoIndexes, keyed, unkeyed)).toBe(3);
      expect(indexWriteUnits(twoIndexes, unkeyed, keyed)).toBe(3);
      expect(indexWriteUnits(twoIndexes, unkeyed, sized(900))).toBe(0);
      // A sort key missing: not in that index.
      expect(indexWriteUnits(twoIndexes, undefined, sized(500, { GSI1PK: s("a") }))).toBe(0);
    });

    it("a transaction is 2 WRU per KB per item, a ConditionCheck included; its index entries are plain writes", () => {
      const put = one("Put", undefined, sized(1500, keysOf(1, "a")));
      const check = one("ConditionCheck", sized(2100), sized(2100));
      expect(costOf(captured("TransactWriteItems", [put, check]), twoIndexes)).toMatchObject({ writeUnits: 4 + 6 + 2, indexWriteUnits: 2 });
    });

    it("a cancelled transaction consumes its writes but writes no index entry", () => {
      const put = one("Put", undefined, undefined);
      const update = one("Update", sized(1500, keysOf(1, "a")), sized(1500, keysOf(1, "a")));
      const cancelled = costOf({ ...captured("TransactWriteItems", [put, update]), status: 400 }, twoIndexes);
      expect(cancelled).toMatchObject({ writeUnits: 2 + 4, indexWriteUnits: 0 });
      // Even when the images differ (another write landed between them).
      const raced = one("Put", undefined, sized(1500, keysOf(2, "b")));
      expect(costOf({ ...captured("TransactWriteItems", [raced]), status: 400 }, twoIndexes)).toMatchObject({
        writeUnits: 4,
        indexWriteUnits: 0,
      });
    });

    it("a batch write rounds each item up on its own", () => {
      const items = [one("Put", undefined, sized(600)), one("Put", undefined, sized(600)), one("Delete", sized(1100), undefined)];
      expect(costOf(captured("BatchWriteItem", items), []).writeUnits).toBe(1 + 1 + 2);
    });
  });

  describe("reads", () => {
    const get = (bytes: number | undefined, consistent: boolean, operation = "GetItem") =>
      costOf(captured(operation, bytes === undefined ? [] : [one("Read", undefined, sized(bytes))], { consistent }), []).readUnits;

    it("4 KB is 4,096 bytes: 4,096 bytes is 1 RRU strongly consistent, ½ eventually; 4,097 is 2 and 1", () => {
      expect([get(4096, true), get(4097, true), get(4096, false), get(4097, false)]).toEqual([1, 2, 0.5, 1]);
    });

    it("an item not found still costs the minimum read", () => {
      expect([get(undefined, true), get(undefined, false)]).toEqual([1, 0.5]);
    });

    it("a query sums what its key condition read, then rounds once; an index read is eventually consistent", () => {
      const items = [one("Read", undefined, sized(1500)), one("Read", undefined, sized(1500)), one("Read", undefined, sized(1500))];
      expect(costOf(captured("Query", items, { consistent: true }), []).readUnits).toBe(2);
      expect(costOf(captured("Query", items, { consistent: false }), []).readUnits).toBe(1);
      expect(costOf(captured("Query", items, { consistent: true, indexName: "GSI1" }), []).readUnits).toBe(1);
      expect(costOf(captured("Query", [], { consistent: false }), []).readUnits).toBe(0.5);
    });

    it("a batch get rounds each item on its own, by its own consistency", () => {
      const items = [
        { ...one("Read", undefined, sized(1500)), action: "Get" },
        { ...one("Read", undefined, sized(1500)), action: "Get" },
        { ...one("Read", undefined, sized(5000)), action: "GetConsistent" },
      ];
      expect(costOf(captured("BatchGetItem", items), []).readUnits).toBe(0.5 + 0.5 + 2);
    });

    it("a transactional read is 2 RRU per 4 KB per item", () => {
      expect(get(4097, false, "TransactGetItems")).toBe(4);
    });
  });
});
