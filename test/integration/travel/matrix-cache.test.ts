import { describe, expect, it } from "vitest";
import { newId } from "#shared/domain/ids";
import type { CachedMatrix } from "#shared/domain/travel/road-matrix";
import { decodeCachedMatrix, encodeCachedMatrix, s3MatrixCache } from "#shared/travel/matrix-cache";

/** The hub's travel cache in the local S3 (s3rver): what is written is read back exactly, per organization, hub and provider. */
const sample = (n: number): CachedMatrix => ({
  keys: Array.from({ length: n }, (_, i) => `-6.${String(10000 + i)},106.80000`),
  fetchedAt: Array.from({ length: n }, (_, i) => 1_700_000_000_000 + i),
  durationsSeconds: Float32Array.from({ length: n * n }, (_, i) => (i % (n + 1) === 0 ? 0 : 60 + i * 0.1)),
  distancesMetres: Float32Array.from({ length: n * n }, (_, i) => (i % (n + 1) === 0 ? 0 : 500 + i * 1.7)),
});

describe("travel matrix cache (S3)", () => {
  it("reads back exactly what it wrote, and nothing for another hub, provider or organization", async () => {
    const organizationId = `o-${newId()}`;
    const cache = s3MatrixCache(organizationId, "hub-1", "city-osrm");
    expect(await cache.read()).toBeUndefined();
    const written = sample(37);
    await cache.write(written);
    expect(await cache.read()).toEqual(written);
    expect(await s3MatrixCache(organizationId, "hub-2", "city-osrm").read()).toBeUndefined();
    expect(await s3MatrixCache(organizationId, "hub-1", "other").read()).toBeUndefined();
    expect(await s3MatrixCache(`o-${newId()}`, "hub-1", "city-osrm").read()).toBeUndefined();
  });

  it("ignores an object it cannot read as a matrix (truncated, or another format)", () => {
    const bytes = encodeCachedMatrix(sample(4));
    expect(decodeCachedMatrix(bytes)).toEqual(sample(4));
    expect(decodeCachedMatrix(bytes.subarray(0, bytes.length - 1))).toBeUndefined();
    expect(decodeCachedMatrix(new TextEncoder().encode("not a matrix"))).toBeUndefined();
  });
});
