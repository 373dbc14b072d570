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
