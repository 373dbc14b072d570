import { describe, expect, it } from "vitest";
import { estimatedItemBytes, estimatedValueBytes, MAX_ITEM_BYTES, MAX_RECORD_BYTES } from "#shared/domain/records/size";

describe("Records: stored item size estimate", () => {
  it.each([
    ["ASCII string", "abc", 3],
    ["CJK string (3 bytes each in UTF-8)", "漢字", 6],
    ["emoji (4 bytes in UTF-8)", "😀", 4],
    ["number (rounded up)", 1.5, 21],
    ["boolean", true, 1],
    ["null", null, 1],
    ["list", ["ab", "c"], 3 + 1 + 2 + 1 + 1],
    ["map with names", { lat: 1, lng: 2 }, 3 + (1 + 3 + 21) * 2],
  ])("%s", (_, value, bytes) => {
    expect(estimatedValueBytes(value)).toBe(bytes);
  });

  it("counts attribute names and nested values of an item, never less than their UTF-8 length", () => {
    const values = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, "漢".repeat(10_000)]));
    const bytes = estimatedItemBytes({ dataId: "A", values });
    expect(bytes).toBeGreaterThanOrEqual(30 * 30_000);
    expect(bytes).toBeGreaterThan(MAX_ITEM_BYTES);
    expect(estimatedItemBytes({ dataId: "A", values: { f0: "x".repeat(10_000) } })).toBeLessThan(MAX_RECORD_BYTES);
  });
});
