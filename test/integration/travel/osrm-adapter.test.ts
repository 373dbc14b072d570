import { afterEach, describe, expect, it } from "vitest";
import { parseTravelProviders, type TravelProviderDeclaration } from "#shared/domain/travel/providers";
import { buildRoadMatrix, type CachedMatrix, TravelMatrixError, UNREACHABLE_METRES } from "#shared/domain/travel/road-matrix";
import { locationKey } from "#shared/routing/matrix";
import type { Location } from "#shared/routing/model";
import { osrmTableSource } from "#shared/travel/osrm";
import { asymmetricLeg, type FakeOsrm, type FakeOsrmOptions, startFakeOsrm } from "#test/support/fake-osrm";

/**
 * The OSRM adapter and the matrix builder against a local server speaking OSRM's table protocol
 * (test/support/fake-osrm.ts): tiles within --max-table-size, the directed entries, errors that are
 * retried (5xx, timeouts, partial or unreadable answers) and those that are not (TooBig, InvalidQuery).
 */
const servers: FakeOsrm[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function engine(options: FakeOsrmOptions = {}) {
  const server = await startFakeOsrm(options);
  servers.push(server);
  return server;
}

const declared = (server: FakeOsrm, settings: Record<string, unknown> = {}) =>
  parseTravelProviders({ providers: { city: { kind: "osrm", url: server.url, ...settings } } }).providers.city as Extract<
    TravelProviderDeclaration,
    { kind: "osrm" }
  >;

const grid = (count: number): Location[] =>
  Array.from({ length: count }, (_, i) => ({ lat: -6.2 + 0.003 * (i % 7) + 1e-6 * i, lng: 106.8 + 0.004 * Math.floor(i / 7) }));

const noSleep = async () => undefined;

/** The engine is asked for points rounded to 1e-5 (the cache's keys). */
const rounded = (l: Location): Location => ({ lat: Number(l.lat.toFixed(5)), lng: Number(l.lng.toFixed(5)) });
const leg = (from: Location, to: Location) => asymmetricLeg(rounded(from), rounded(to));

describe("OSRM table adapter", () => {
  it("cuts the matrix into tiles within maxTableSize, at most `concurrency` at once, and keeps every directed entry", async () => {
    const server = await engine({ maxTableSize: 5 });
    const points = grid(12);
    const source = osrmTableSource(declared(server, { maxTableSize: 5, concurrency: 3 }));
    let inFlight = 0;
    let most = 0;
    const counted = {
      ...source,
      table: async (...args: Parameters<typeof source.table>) => {
        most = Math.max(most, ++inFlight);
        try {
          return await source.table(...args);
        } finally {
          inFlight--;
        }
      },
    };
    const matrix = await buildRoadMatrix({ locations: points, source: counted, cacheTtlMs: 1, now: () => 0, sleep: noSleep });
    expect(matrix.requests).toBe(9); // ⌈12/5⌉²
    expect(matrix.elementsRequested).toBe(144);
    expect(server.elements).toBe(144);
    expect(server.largest).toEqual({ sources: 5, destinations: 5 });
    expect(most).toBe(3);
    const n = points.length;
    let asymmetric = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const expected = i === j ? { seconds: 0, metres: 0 } : leg(points[i]!, points[j]!);
        expect(matrix.spec.durationsSeconds[i * n + j]).toBe(Math.fround(expected.seconds));
        expect(matrix.spec.distancesMetres[i * n + j]).toBe(Math.fround(expected.metres));
        if (matrix.spec.durationsSeconds[i * n + j] !== matrix.spec.durationsSeconds[j * n + i]) asymmetric++;
      }
    }
    expect(asymmetric).toBeGreaterThan(n * (n - 1) * 0.9);
    expect(matrix.spec.keys).toEqual(points.map(locationKey));
  });

  it("retries server errors, timeouts, partial and unreadable answers within the bound", async () => {
    const faults: FakeOsrmOptions["fault"][] = [
      (n) => (n === 1 ? { status: 503, code: "Busy" } : undefined),
      (n) => (n === 1 ? "partial" : undefined),
      (n) => (n === 1 ? "garbage" : undefined),
      (n) => (n === 1 ? "hang" : undefined),
      (n) => (n === 1 ? { status: 429, code: "TooManyRequests" } : undefined),
    ];
    for (const fault of faults) {
      const server = await engine({ fault });
      const matrix = await buildRoadMatrix({
        locations: grid(3),
        source: osrmTableSource(declared(server, { timeoutMs: 300 })),
        cacheTtlMs: 1,
        now: () => 0,
        sleep: noSleep,
      });
      expect(server.requests).toBe(2);
      expect(matrix.spec.durationsSeconds[1]).toBe(Math.fround(leg(grid(3)[0]!, grid(3)[1]!).seconds));
    }
  });

  it("gives up after the retries with the last reason, and does not retry what the server refuses", async () => {
    const down = await engine({ fault: () => ({ status: 502, code: "BadGateway" }) });
    await expect(
      buildRoadMatrix({
        locations: grid(3),
        source: osrmTableSource(declared(down, { retries: 2 })),
        cacheTtlMs: 1,
        now: () => 0,
        sleep: noSleep,
      }),
    ).rejects.toMatchObject({
      message: "The osrm travel provider gave an unusable answer (3 attempts of a 3×3 request).",
      detail: "osrm, 3 attempts of a 3×3 request: BadGateway: injected BadGateway (HTTP 502)",
    });
    expect(down.requests).toBe(3);

    // The operator declared a larger table than the server allows: OSRM answers TooBig, which asking again cannot cure.
    const small = await engine({ maxTableSize: 2 });
    await expect(
      buildRoadMatrix({
        locations: grid(3),
        source: osrmTableSource(declared(small, { maxTableSize: 3 })),
        cacheTtlMs: 1,
        now: () => 0,
        sleep: noSleep,
      }),
    ).rejects.toMatchObject({
      message: "The osrm travel provider refused a request.",
      detail: "osrm: TooBig: Too many table coordinates (HTTP 400)",
    });
    expect(small.requests).toBe(1);
  });

  it("marks pairs the engine cannot route (null) as unreachable rather than free", async () => {
    const island: Location = { lat: -7, lng: 110 };
    const server = await engine({
      leg: (from, to) => (from === island || to === island || from.lat === -7 || to.lat === -7 ? null : asymmetricLeg(from, to)),
    });
    const matrix = await buildRoadMatrix({
      locations: [...grid(2), island],
      source: osrmTableSource(declared(server)),
      cacheTtlMs: 1,
      now: () => 0,
      sleep: noSleep,
    });
    expect(matrix.spec.distancesMetres[0 * 3 + 2]).toBe(UNREACHABLE_METRES);
    expect(matrix.spec.distancesMetres[2 * 3 + 0]).toBe(UNREACHABLE_METRES);
    expect(matrix.spec.distancesMetres[2 * 3 + 2]).toBe(0);
  });

  it("asks nothing for cached points younger than the TTL and only the missing rows and columns otherwise", async () => {
    const server = await engine({ maxTableSize: 100 });
    let stored: CachedMatrix | undefined;
    const cache = {
      read: async () => stored,
      write: async (matrix: CachedMatrix) => {
        stored = matrix;
      },
    };
    const source = osrmTableSource(declared(server));
    const day = 86_400_000;
    const points = grid(20);
    const first = await buildRoadMatrix({ locations: points, source, cache, cacheTtlMs: 30 * day, now: () => 0, sleep: noSleep });
    expect(first).toMatchObject({ elementsRequested: 400, elementsCached: 0 });

    const again = await buildRoadMatrix({
      locations: [...points].reverse(),
      source,
      cache,
      cacheTtlMs: 30 * day,
      now: () => day,
      sleep: noSleep,
    });
    expect(again).toMatchObject({ elementsRequested: 0, elementsCached: 400, requests: 0 });
    // Same numbers whatever the order of the points.
    const i = again.spec.keys.indexOf(locationKey(points[3]!));
    const j = again.spec.keys.indexOf(locationKey(points[8]!));
    expect(again.spec.durationsSeconds[i * 20 + j]).toBe(first.spec.durationsSeconds[3 * 20 + 8]);

    // 10 % new points (2 of 20 replaced): 2 new rows of 20 and 18 known rows' 2 new columns.
    const today = [...points.slice(0, 18), { lat: -6.3, lng: 106.9 }, { lat: -6.31, lng: 106.91 }];
    const mixed = await buildRoadMatrix({ locations: today, source, cache, cacheTtlMs: 30 * day, now: () => 2 * day, sleep: noSleep });
    expect(mixed).toMatchObject({ elementsRequested: 2 * 20 + 18 * 2, elementsCached: 18 * 18 });
    for (let a = 0; a < 20; a++)
      for (let b = 0; b < 20; b++) {
        const expected = a === b ? 0 : leg(today[a]!, today[b]!).metres;
        expect(mixed.spec.distancesMetres[a * 20 + b]).toBe(Math.fround(expected));
      }

    // Past the TTL, everything is asked again.
    const stale = await buildRoadMatrix({ locations: today, source, cache, cacheTtlMs: 30 * day, now: () => 40 * day, sleep: noSleep });
    expect(stale.elementsRequested).toBe(400);
  });

  it("asks nothing when the plan's cap refuses the elements, and says why", async () => {
    const server = await engine();
    const elementsBudget = {
      reserve: async (elements: number) => (elements > 5 ? `cap: ${elements} > 5` : undefined),
      settle: async () => undefined,
    };
    await expect(
      buildRoadMatrix({ locations: grid(3), source: osrmTableSource(declared(server)), cacheTtlMs: 1, now: () => 0, elementsBudget }),
    ).rejects.toThrow("cap: 9 > 5");
    expect(server.requests).toBe(0);
  });

  it("caches and charges the tiles answered before a failure; the next run asks only for what is missing", async () => {
    // 4 points in tiles of 2: rows {0,1} × {0,1}, {0,1} × {2,3}, {2,3} × {0,1}, {2,3} × {2,3}; the 4th request on fails.
    const failing = await engine({ maxTableSize: 2, fault: (request) => (request >= 4 ? { status: 502, code: "BadGateway" } : undefined) });
    const points = grid(4);
    let stored: CachedMatrix | undefined;
    const cache = {
      read: async () => stored,
      write: async (matrix: CachedMatrix) => {
        stored = matrix;
      },
    };
    const charged: Array<{ reserved: number; answered: number }> = [];
    const elementsBudget = {
      reserve: async () => undefined,
      settle: async (reserved: number, answered: number) => void charged.push({ reserved, answered }),
    };
    const source = osrmTableSource(declared(failing, { maxTableSize: 2, concurrency: 1, retries: 1 }));
    const failure = await buildRoadMatrix({
      locations: points,
      source,
      cache,
      cacheTtlMs: 10,
      now: () => 0,
      sleep: noSleep,
      elementsBudget,
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TravelMatrixError);
    expect((failure as TravelMatrixError).elementsAnswered).toBe(12);
    expect(charged).toEqual([{ reserved: 16, answered: 12 }]);
    // Points 0 and 1 have every entry between them: cached; 2 and 3 lack their own tile.
    expect(stored?.keys).toEqual(points.slice(0, 2).map(locationKey));
    expect(stored?.durationsSeconds[1]).toBe(Math.fround(leg(points[0]!, points[1]!).seconds));

    const healthy = await engine({ maxTableSize: 2 });
    const retried = await buildRoadMatrix({
      locations: points,
      source: osrmTableSource(declared(healthy, { maxTableSize: 2, concurrency: 1 })),
      cache,
      cacheTtlMs: 10,
      now: () => 1,
      sleep: noSleep,
      elementsBudget,
    });
    // Rows of 2 and 3 to all 4 points, and columns 2 and 3 from 0 and 1: 8 + 4.
    expect(retried.elementsRequested).toBe(12);
    expect(retried.elementsCached).toBe(4);
    expect(charged[1]).toEqual({ reserved: 12, answered: 12 });
    for (let a = 0; a < 4; a++)
      for (let b = 0; b < 4; b++)
        expect(retried.spec.durationsSeconds[a * 4 + b]).toBe(a === b ? 0 : Math.fround(leg(points[a]!, points[b]!).seconds));
  });
});
