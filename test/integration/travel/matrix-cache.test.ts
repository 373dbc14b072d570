import { afterAll, describe, expect, it } from "vitest";
import { newId } from "#shared/domain/ids";
import { parseTravelProviders, type TravelProviderDeclaration } from "#shared/domain/travel/providers";
import { buildRoadMatrix, type CachedMatrix } from "#shared/domain/travel/road-matrix";
import type { Location } from "#shared/routing/model";
import { bucketName, s3Sdk } from "#shared/blob/s3-sdk";
import { objectKeys } from "#shared/store/keys";
import { decodeCachedMatrix, encodeCachedMatrix, s3MatrixCache } from "#shared/travel/matrix-cache";
import { osrmTableSource } from "#shared/travel/osrm";
import { type FakeOsrm, startFakeOsrm } from "#test/support/fake-osrm";

/**
 * The hub's bounded travel cache in the local S3 (s3rver): an index and one block per run's matrix, read
 * back exactly, per organization, hub and provider; and against a fake engine that counts the elements it
 * is asked, what it saves from one day to the next.
 */
const sample = (n: number, from = 0): CachedMatrix => ({
  keys: Array.from({ length: n }, (_, i) => `-6.${String(10000 + from + i)},106.80000`),
  fetchedAt: Array.from({ length: n }, (_, i) => 1_700_000_000_000 + i),
  durationsSeconds: Float32Array.from({ length: n * n }, (_, i) => (i % (n + 1) === 0 ? 0 : 60 + i * 0.1)),
  distancesMetres: Float32Array.from({ length: n * n }, (_, i) => (i % (n + 1) === 0 ? 0 : 500 + i * 1.7)),
});
const NOW = 1_700_000_100_000;
const DAY = 86_400_000;
const TTL = 30 * DAY;

const servers: FakeOsrm[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function put(key: string, body: Uint8Array) {
  const { client, sdk } = await s3Sdk();
  await client.send(new sdk.PutObjectCommand({ Bucket: bucketName(), Key: key, Body: body }));
}

async function exists(key: string) {
  const { client, sdk } = await s3Sdk();
  return client.send(new sdk.HeadObjectCommand({ Bucket: bucketName(), Key: key })).then(
    () => true,
    () => false,
  );
}

describe("travel matrix cache (S3)", () => {
  it("reads back exactly what it wrote, and nothing for another hub, provider or organization", async () => {
    const organizationId = `o-${newId()}`;
    const written = sample(37);
    expect(await s3MatrixCache(organizationId, "hub-1", "city-osrm").read(written.keys, NOW, TTL)).toBeUndefined();
    await s3MatrixCache(organizationId, "hub-1", "city-osrm").write(written, NOW, TTL);
    expect(await s3MatrixCache(organizationId, "hub-1", "city-osrm").read(written.keys, NOW, TTL)).toEqual(written);
    expect(await s3MatrixCache(organizationId, "hub-2", "city-osrm").read(written.keys, NOW, TTL)).toBeUndefined();
    expect(await s3MatrixCache(organizationId, "hub-1", "other").read(written.keys, NOW, TTL)).toBeUndefined();
    expect(await s3MatrixCache(`o-${newId()}`, "hub-1", "city-osrm").read(written.keys, NOW, TTL)).toBeUndefined();
  });

  it("keeps several runs' matrices, starts from the one holding most of the points, and deletes what it evicts", async () => {
    const organizationId = `o-${newId()}`;
    const cache = () => s3MatrixCache(organizationId, "hub-1", "city-osrm", { maxPoints: 100 });
    const [a, b, c] = [sample(40, 0), sample(40, 100), sample(40, 200)];
    await cache().write(a, NOW, TTL);
    await cache().write(b, NOW + 1, TTL);
    expect(await cache().read(a.keys.slice(0, 30), NOW + 2, TTL)).toEqual(a);
    expect(await cache().read([...b.keys.slice(0, 30), a.keys[0]!], NOW + 2, TTL)).toEqual(b);
    // A third 40-point matrix passes the 100-point bound: the least recently used (a) goes, in S3 too.
    await cache().write(c, NOW + 3, TTL);
    expect(await cache().read(a.keys, NOW + 4, TTL)).toBeUndefined();
    expect(await cache().read(b.keys, NOW + 4, TTL)).toEqual(b);
    const { client, sdk } = await s3Sdk();
    const listed = await client.send(
      new sdk.ListObjectsV2Command({
        Bucket: bucketName(),
        Prefix: objectKeys.travelMatrixCacheIndex(organizationId, "hub-1", "city-osrm").replace("index.json", ""),
      }),
    );
    // The index and two blocks.
    expect(listed.Contents?.length).toBe(3);
  });

  it("reads a cache written before the index (one .bin matrix) as a block, and drops it once evicted", async () => {
    const organizationId = `o-${newId()}`;
    const legacyKey = objectKeys.travelMatrixCache(organizationId, "hub-1", "city-osrm");
    const old = sample(20);
    await put(legacyKey, encodeCachedMatrix(old));
    const cache = () => s3MatrixCache(organizationId, "hub-1", "city-osrm", { maxPoints: 100 });
    expect(await cache().read(old.keys, NOW, TTL)).toEqual(old);
    // A matrix holding all of its points replaces it.
    await cache().write(sample(25), NOW, TTL);
    expect(await exists(legacyKey)).toBe(false);
  });

  it("ignores an object it cannot read as a matrix (truncated, or another format)", () => {
    const bytes = encodeCachedMatrix(sample(4));
    expect(decodeCachedMatrix(bytes)).toEqual(sample(4));
    expect(decodeCachedMatrix(bytes.subarray(0, bytes.length - 1))).toBeUndefined();
    expect(decodeCachedMatrix(new TextEncoder().encode("not a matrix"))).toBeUndefined();
  });

  it("a second day with 10 % new visits asks at most 25 % of the first day's elements, also after a day of other addresses", async () => {
    const server = await startFakeOsrm({ maxTableSize: 100 });
    servers.push(server);
    const declaration = parseTravelProviders({ providers: { city: { kind: "osrm", url: server.url, maxTableSize: 100 } } }).providers
      .city as Extract<TravelProviderDeclaration, { kind: "osrm" }>;
    const organizationId = `o-${newId()}`;
    const point = (i: number): Location => ({ lat: -6.2 + 0.0007 * (i % 50), lng: 106.8 + 0.0011 * Math.floor(i / 50) });
    const points = (from: number, count: number) => Array.from({ length: count }, (_, i) => point(from + i));
    // Day n: each run a fresh cache object, as each run's worker builds one.
    const day = async (locations: Location[], n: number) => {
      const before = server.elements;
      const matrix = await buildRoadMatrix({
        locations,
        source: osrmTableSource(declaration),
        cache: s3MatrixCache(organizationId, "hub-1", "city"),
        cacheTtlMs: TTL,
        now: () => NOW + n * DAY,
        sleep: async () => undefined,
      });
      expect(matrix.elementsRequested).toBe(server.elements - before);
      return matrix.elementsRequested;
    };

    const monday = points(0, 200);
    const first = await day(monday, 0);
    expect(first).toBe(200 * 200);
    // 90 % of Monday's visits and 10 % new: 200² − 180² entries asked (the new rows and columns).
    const tuesday = [...monday.slice(0, 180), ...points(1_000, 20)];
    const second = await day(tuesday, 1);
    expect(second).toBe(200 * 200 - 180 * 180);
    expect(second / first).toBeLessThanOrEqual(0.25);

    // A day of other addresses, then next Monday: 90 % of Monday's visits and 10 % new. The cache that kept
    // only the last run's matrix would ask all of it; the bounded one starts from Monday's.
    await day(points(2_000, 200), 2);
    const nextMonday = [...monday.slice(20), ...points(3_000, 20)];
    const third = await day(nextMonday, 7);
    expect(third).toBe(200 * 200 - 180 * 180);
    expect(third / first).toBeLessThanOrEqual(0.25);
  });
});
