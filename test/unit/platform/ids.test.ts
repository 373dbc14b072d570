import { describe, expect, it } from "vitest";
import { ID_PATTERN, newId } from "#shared/domain/ids";

describe("Function: newId", () => {
  it("keeps the 24-hex form with the creation second first, so ids order by second", () => {
    const early = new Date("2026-11-27T10:00:00.900Z");
    const late = new Date("2026-11-27T10:00:01.000Z");
    const first = newId(early);
    const second = newId(late);
    expect(first).toMatch(ID_PATTERN);
    expect(first.slice(0, 8)).toBe(Math.floor(early.getTime() / 1000).toString(16));
    expect(second.slice(0, 8)).toBe(Math.floor(late.getTime() / 1000).toString(16));
    expect(first < second).toBe(true);
  });

  it("shares no counter or process part between consecutive ids: the 8 bytes after the second are fresh each time", () => {
    const now = new Date("2026-11-27T10:00:00Z");
    const tails = Array.from({ length: 2000 }, () => newId(now).slice(8));
    expect(new Set(tails).size).toBe(tails.length);
    // A counter would make consecutive tails differ by a small step; a shared process part would repeat a prefix.
    const asNumbers = tails.map((tail) => BigInt(`0x${tail}`));
    const smallSteps = asNumbers.slice(1).filter((value, i) => {
      const step = value - (asNumbers[i] as bigint);
      return step > -1000n && step < 1000n;
    });
    expect(smallSteps).toHaveLength(0);
    expect(new Set(tails.map((tail) => tail.slice(0, 10))).size).toBeGreaterThan(1990);
    // Every hex digit position takes many values (no fixed bytes).
    for (let position = 0; position < 16; position++) expect(new Set(tails.map((tail) => tail[position])).size).toBeGreaterThan(12);
  });

  it("accepts ids minted in the earlier layout (process bytes + counter): same form", () => {
    expect("6747ee4c1a2b3c4d5e000001").toMatch(ID_PATTERN);
  });
});
