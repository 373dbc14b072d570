import { randomUUID } from "node:crypto";
import {
  admitBlock,
  bestBlock,
  type CacheBlock,
  type CacheIndex,
  DEFAULT_CACHE_MAX_POINTS,
} from "#shared/domain/travel/matrix-cache-index";
import type { CachedMatrix, TravelMatrixCache } from "#shared/domain/travel/road-matrix";
import { bucketName, s3Sdk } from "#shared/blob/s3-sdk";
import { objectKeys } from "#shared/store/keys";

/**
 * One block of the travel matrix cache of a hub and provider (the bounded cache: s3MatrixCache below), and
 * the whole cache before it had blocks (the `travelMatrixCache` key, still read). Binary, to stay small (1,650 points: 2 × 1,650² × 4 bytes ≈ 22 MB):
 * a little-endian u32 header length, the JSON header `{ version, keys, fetchedAt }`, padding to 4
 * bytes, then the Float32 durations (seconds) and distances (metres), row-major. Matrices are built
 * in Float32 too, so a cached run plans with exactly the numbers a fresh one did.
 */
const FORMAT_VERSION = 1;

export function encodeCachedMatrix(matrix: CachedMatrix): Uint8Array {
  const header = new TextEncoder().encode(JSON.stringify({ version: FORMAT_VERSION, keys: matrix.keys, fetchedAt: matrix.fetchedAt }));
  const offset = Math.ceil((4 + header.length) / 4) * 4;
  const cells = matrix.keys.length ** 2;
  const bytes = new Uint8Array(offset + 8 * cells);
  new DataView(bytes.buffer).setUint32(0, header.length, true);
  bytes.set(header, 4);
  bytes.set(new Uint8Array(matrix.durationsSeconds.buffer, matrix.durationsSeconds.byteOffset, 4 * cells), offset);
  bytes.set(new Uint8Array(matrix.distancesMetres.buffer, matrix.distancesMetres.byteOffset, 4 * cells), offset + 4 * cells);
  return bytes;
}

/** The matrix, or undefined for anything this version did not write (another format, a truncated object). */
export function decodeCachedMatrix(bytes: Uint8Array): CachedMatrix | undefined {
  if (bytes.length < 4) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(0, true);
  if (4 + headerLength > bytes.length) return undefined;
  let header: { version?: number; keys?: string[]; fetchedAt?: number[] };
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + headerLength)));
  } catch {
    return undefined;
  }
  if (
    header.version !== FORMAT_VERSION ||
    !Array.isArray(header.keys) ||
    !Array.isArray(header.fetchedAt) ||
    header.fetchedAt.length !== header.keys.length
  )
    return undefined;
  const offset = Math.ceil((4 + headerLength) / 4) * 4;
  const cells = header.keys.length ** 2;
  if (bytes.length !== offset + 8 * cells) return undefined;
  // Copied out, aligned, whatever buffer the SDK handed over.
  const copy = bytes.slice(offset);
  return {
    keys: header.keys,
    fetchedAt: header.fetchedAt,
    durationsSeconds: new Float32Array(copy.buffer, 0, cells),
    distancesMetres: new Float32Array(copy.buffer, 4 * cells, cells),
  };
}

/** The index object (JSON): the blocks kept, their points and when each was asked. */
function decodeIndex(bytes: Uint8Array): CacheIndex | undefined {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as { version?: number; blocks?: CacheBlock[] };
    if (parsed.version !== INDEX_VERSION || !Array.isArray(parsed.blocks)) return undefined;
    const valid = parsed.blocks.every(
      (block) =>
        typeof block.id === "string" &&
        /^[A-Za-z0-9-]{1,64}$/.test(block.id) &&
        Array.isArray(block.keys) &&
        Array.isArray(block.fetchedAt) &&
        block.keys.length === block.fetchedAt.length &&
        typeof block.usedAt === "number",
    );
    return valid ? { blocks: parsed.blocks } : undefined;
  } catch {
    return undefined;
  }
}

const INDEX_VERSION = 2;
/** The block id of a cache written before the index (the `.bin` object of one matrix): read as a block, deleted when evicted. */
const LEGACY_BLOCK = "legacy";

export interface MatrixCacheOptions {
  /** Points summed over the blocks kept (shared/domain/travel/matrix-cache-index.ts). */
  maxPoints?: number;
}

/**
 * The bounded cache of one hub and provider in S3: an index object and one object per block. A run reads
 * the index and the one block it starts from (2 GETs), and writes its block and the index (2 PUTs), deleting
 * the blocks the index no longer keeps. Two runs of a hub at once may each write the index: the later one
 * wins and the other's block is left unreferenced until the bucket's lifecycle rule expires it (a cache: a
 * miss costs elements, never a wrong plan). A cache written before the index (one `.bin` matrix) is read as
 * a block and deleted when evicted.
 */
export function s3MatrixCache(
  organizationId: string,
  hubId: string,
  provider: string,
  options: MatrixCacheOptions = {},
): TravelMatrixCache {
  const maxPoints = options.maxPoints ?? DEFAULT_CACHE_MAX_POINTS;
  const indexKey = objectKeys.travelMatrixCacheIndex(organizationId, hubId, provider);
  const blockKey = (id: string) =>
    id === LEGACY_BLOCK
      ? objectKeys.travelMatrixCache(organizationId, hubId, provider)
      : objectKeys.travelMatrixCacheBlock(organizationId, hubId, provider, id);
  // What this run read: the index it adds its block to, and the block it started from.
  let index: CacheIndex | undefined;
  let baseId: string | undefined;

  async function get(key: string): Promise<Uint8Array | undefined> {
    const { client, sdk } = await s3Sdk();
    try {
      const output = await client.send(new sdk.GetObjectCommand({ Bucket: bucketName(), Key: key }));
      return await output.Body?.transformToByteArray();
    } catch (error) {
      // Without s3:ListBucket (the worker has none) S3 answers a missing key with 403: for a cache, a miss.
      if (error instanceof Error && ["NoSuchKey", "NotFound", "AccessDenied"].includes(error.name)) return undefined;
      throw error;
    }
  }

  async function readIndex(): Promise<CacheIndex> {
    const bytes = await get(indexKey);
    const stored = bytes ? decodeIndex(bytes) : undefined;
    if (stored) return stored;
    const legacy = await get(blockKey(LEGACY_BLOCK));
    const matrix = legacy ? decodeCachedMatrix(legacy) : undefined;
    if (!matrix) return { blocks: [] };
    return { blocks: [{ id: LEGACY_BLOCK, keys: matrix.keys, fetchedAt: matrix.fetchedAt, usedAt: Math.max(0, ...matrix.fetchedAt) }] };
  }

  return {
    async read(keys, now, ttlMs) {
      index = await readIndex();
      const block = bestBlock(index, keys, now, ttlMs);
      if (!block) return undefined;
      const bytes = await get(blockKey(block.id));
      const matrix = bytes ? decodeCachedMatrix(bytes) : undefined;
      // A block the index names but S3 no longer has (expired, or a racing run deleted it): a miss.
      if (!matrix || matrix.keys.length !== block.keys.length) return undefined;
      baseId = block.id;
      return matrix;
    },
    async write(matrix, now, ttlMs) {
      const { client, sdk } = await s3Sdk();
      const id = randomUUID();
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: bucketName(),
          Key: blockKey(id),
          Body: encodeCachedMatrix(matrix),
          ContentType: "application/octet-stream",
        }),
      );
      const admitted = admitBlock(
        index ?? (await readIndex()),
        { id, keys: matrix.keys, fetchedAt: matrix.fetchedAt, usedAt: now },
        { maxPoints, now, ttlMs, baseId },
      );
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: bucketName(),
          Key: indexKey,
          Body: JSON.stringify({ version: INDEX_VERSION, blocks: admitted.index.blocks }),
          ContentType: "application/json",
        }),
      );
      // Deleting is tidiness (the lifecycle rule expires what is left): a failure costs bytes, not the run.
      await Promise.all(
        admitted.evicted.map((evicted) =>
          client.send(new sdk.DeleteObjectCommand({ Bucket: bucketName(), Key: blockKey(evicted) })).catch(() => undefined),
        ),
      );
    },
  };
}
