/**
 * The bounded matrix cache of one hub and provider (no I/O here; shared/travel/matrix-cache.ts stores it).
 * A run's matrix is kept whole as one *block* (the directed matrix between the run's points); the cache is
 * the blocks of the latest runs, most recently used first, up to `maxPoints` points summed over the blocks
 * (so its bytes stay within 8 × maxPoints², whatever the runs' sizes). A run starts from the one block
 * that holds the most of its points still within the TTL and asks the engine only for the others' rows
 * and columns; so a weekday's visits are found in last week's block of that weekday even when the days
 * between served other addresses.
 *
 * Why blocks and not one matrix of every point: the entries between points of different runs were never
 * asked, so a union of points would be a sparse matrix whose gaps cost as many requests as they save.
 */
export interface CacheBlock {
  id: string;
  keys: string[];
  /** Per key, ms since the epoch: when its row and column were asked. */
  fetchedAt: number[];
  /** When a run last wrote the block or started from it (ms since the epoch). */
  usedAt: number;
}

export interface CacheIndex {
  blocks: CacheBlock[];
}

/** The default bound: the points summed over a cache's blocks (≈ 3 days of a 1,500-visit hub; at most 200 MB). */
export const DEFAULT_CACHE_MAX_POINTS = 5_000;

/** Fresh points of `block` among `wanted`. */
function freshOverlap(block: CacheBlock, wanted: ReadonlySet<string>, now: number, ttlMs: number): number {
  let count = 0;
  block.keys.forEach((key, i) => {
    if (wanted.has(key) && now - block.fetchedAt[i]! < ttlMs) count++;
  });
  return count;
}

/** The block holding the most of `keys` within the TTL (ties: the most recently used); undefined when none holds any. */
export function bestBlock(index: CacheIndex, keys: readonly string[], now: number, ttlMs: number): CacheBlock | undefined {
  const wanted = new Set(keys);
  let best: { block: CacheBlock; overlap: number } | undefined;
  for (const block of index.blocks) {
    const overlap = freshOverlap(block, wanted, now, ttlMs);
    if (overlap === 0) continue;
    if (!best || overlap > best.overlap || (overlap === best.overlap && block.usedAt > best.block.usedAt)) best = { block, overlap };
  }
  return best?.block;
}

/**
 * The index with `block` added (and `baseId`, the block the run started from, marked used), and the ids
 * of the blocks it no longer keeps: blocks whose points are all stale, blocks whose points are all in the
 * new block (it holds every entry between them, as fresh or fresher), then the least recently used while
 * the points summed over the blocks pass `maxPoints`. The new block is always kept.
 */
export function admitBlock(
  index: CacheIndex,
  block: CacheBlock,
  options: { maxPoints: number; now: number; ttlMs: number; baseId?: string | undefined },
): { index: CacheIndex; evicted: string[] } {
  const { maxPoints, now, ttlMs, baseId } = options;
  const inNew = new Set(block.keys);
  const evicted: string[] = [];
  const candidates: CacheBlock[] = [];
  for (const old of index.blocks) {
    if (old.id === block.id) continue;
    const stale = old.fetchedAt.every((at) => now - at >= ttlMs);
    const covered = old.keys.every((key) => inNew.has(key));
    if (stale || covered) evicted.push(old.id);
    else candidates.push(old.id === baseId ? { ...old, usedAt: now } : old);
  }
  candidates.sort((a, b) => b.usedAt - a.usedAt);
  const kept: CacheBlock[] = [block];
  let points = block.keys.length;
  let full = false;
  for (const old of candidates) {
    full ||= points + old.keys.length > maxPoints;
    if (full) evicted.push(old.id);
    else {
      kept.push(old);
      points += old.keys.length;
    }
  }
  return { index: { blocks: kept }, evicted };
}
