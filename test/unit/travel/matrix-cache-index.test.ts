import { describe, expect, it } from "vitest";
import { admitBlock, bestBlock, type CacheBlock } from "#shared/domain/travel/matrix-cache-index";

const DAY = 86_400_000;
const TTL = 30 * DAY;
const block = (id: string, keys: string[], usedAt: number, fetchedAt = usedAt): CacheBlock => ({
  id,
  keys,
  fetchedAt: keys.map(() => fetchedAt),
  usedAt,
});
const range = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

describe("bounded matrix cache: which block a run starts from", () => {
  it("picks the block with the most fresh points of the run, ties to the most recently used; none when none overlaps", () => {
    const index = { blocks: [block("a", range("a", 10), 1), block("b", [...range("a", 5), ...range("b", 6)], 2)] };
    expect(bestBlock(index, range("a", 10), 3, TTL)?.id).toBe("a");
    expect(bestBlock(index, [...range("a", 5), ...range("b", 6)], 3, TTL)?.id).toBe("b");
    expect(bestBlock(index, range("a", 5), 3, TTL)?.id).toBe("b");
    expect(bestBlock(index, range("z", 5), 3, TTL)).toBeUndefined();
  });

  it("does not count points older than the TTL", () => {
    const index = { blocks: [block("old", range("a", 10), 40 * DAY, 0), block("new", range("a", 3), 40 * DAY)] };
    expect(bestBlock(index, range("a", 10), 40 * DAY, TTL)?.id).toBe("new");
  });
});

describe("bounded matrix cache: what it keeps", () => {
  it("keeps the most recently used blocks within the bound, evicting the older ones first", () => {
    const index = { blocks: [block("a", range("a", 40), 1), block("b", range("b", 40), 2)] };
    const { index: next, evicted } = admitBlock(index, block("c", range("c", 40), 3), { maxPoints: 100, now: 3, ttlMs: TTL });
    expect(next.blocks.map((each) => each.id)).toEqual(["c", "b"]);
    expect(evicted).toEqual(["a"]);
  });

  it("counts the block a run started from as used, so it outlives a block written later but not used since", () => {
    const index = { blocks: [block("a", range("a", 40), 1), block("b", range("b", 40), 2)] };
    const { index: next, evicted } = admitBlock(index, block("c", [...range("a", 36), ...range("c", 4)], 3), {
      maxPoints: 100,
      now: 3,
      ttlMs: TTL,
      baseId: "a",
    });
    expect(next.blocks.map((each) => [each.id, each.usedAt])).toEqual([
      ["c", 3],
      ["a", 3],
    ]);
    expect(evicted).toEqual(["b"]);
  });

  it("drops blocks whose points are all stale or all in the new block, and always keeps the new one", () => {
    const index = { blocks: [block("stale", range("s", 5), 0, 0), block("covered", range("a", 5), 35 * DAY)] };
    const { index: next, evicted } = admitBlock(index, block("big", range("a", 200), 35 * DAY), {
      maxPoints: 100,
      now: 35 * DAY,
      ttlMs: TTL,
    });
    expect(next.blocks.map((each) => each.id)).toEqual(["big"]);
    expect(evicted.sort()).toEqual(["covered", "stale"]);
  });
});
