// Road-network matrix figures against a local fake OSRM (test/support/fake-osrm.ts): the time to build
// a run's matrix (tiles of maxTableSize², `concurrency` at once, through the HTTP protocol) and the
// elements asked per run at 100 / 500 / 1,500 visits — first run, the same visits again, and a day with
// 10 % new visits — with the hub's cache (in memory here; S3 on AWS).
//
//   npm run bench:travel [-- --visits 100,500,1500 --table 100 --concurrency 4 --latency 0]
//
// `--latency` adds ms to every request (a remote engine); the fake engine's own work is a haversine per entry.
import { parseArgs } from "node:util";
import { parseTravelProviders, type TravelProviderDeclaration } from "#shared/domain/travel/providers";
import { buildRoadMatrix, type CachedMatrix } from "#shared/domain/travel/road-matrix";
import type { Location } from "#shared/routing/model";
import { Random } from "#shared/routing/random";
import { osrmTableSource } from "#shared/travel/osrm";
import { encodeCachedMatrix } from "#shared/travel/matrix-cache";
import { startFakeOsrm } from "#test/support/fake-osrm";

const { values } = parseArgs({
  options: {
    visits: { type: "string", default: "100,500,1500" },
    table: { type: "string", default: "100" },
    concurrency: { type: "string", default: "4" },
    latency: { type: "string", default: "0" },
    vehicles: { type: "string", default: "10" },
  },
});
const latency = Number(values.latency);
const maxTableSize = Number(values.table);
const server = await startFakeOsrm({ maxTableSize });
const declaration = parseTravelProviders({
  providers: { bench: { kind: "osrm", url: server.url, maxTableSize, concurrency: Number(values.concurrency) } },
}).providers.bench as Extract<TravelProviderDeclaration, { kind: "osrm" }>;
const plain = osrmTableSource(declaration);
const source =
  latency > 0
    ? {
        ...plain,
        table: async (...args: Parameters<typeof plain.table>) => {
          await new Promise((r) => setTimeout(r, latency));
          return plain.table(...args);
        },
      }
    : plain;

function day(random: Random, count: number): Location[] {
  // Visits within ~15 km of the hub, vehicles starting at the hub or at drivers' homes.
  return Array.from({ length: count }, () => ({ lat: -6.2 + (random.next() - 0.5) * 0.25, lng: 106.8 + (random.next() - 0.5) * 0.25 }));
}

console.log(
  `fake OSRM, maxTableSize ${maxTableSize}, concurrency ${declaration.concurrency}, +${latency} ms per request; ${values.vehicles} vehicle points besides the visits`,
);
console.log("visits | points | run | elements asked | cached | requests | seconds | cache object MB");
for (const visits of values.visits.split(",").map(Number)) {
  const random = new Random(visits);
  let stored: CachedMatrix | undefined;
  const cache = {
    read: async () => stored,
    write: async (matrix: CachedMatrix) => {
      stored = matrix;
    },
  };
  const vehicles = [{ lat: -6.2, lng: 106.8 }, ...day(random, Number(values.vehicles) - 1)];
  const first = [...day(random, visits), ...vehicles];
  const renewed = [...first.slice(0, Math.round(visits * 0.9)), ...day(random, visits - Math.round(visits * 0.9)), ...vehicles];
  for (const [label, points] of [
    ["first", first],
    ["same visits", first],
    ["10 % new", renewed],
  ] as const) {
    const started = performance.now();
    const matrix = await buildRoadMatrix({ locations: points, source, cache, cacheTtlMs: 30 * 86_400_000, now: () => Date.now() });
    const seconds = (performance.now() - started) / 1000;
    const megabytes = stored ? encodeCachedMatrix(stored).length / 1_048_576 : 0;
    console.log(
      `${visits} | ${points.length} | ${label} | ${matrix.elementsRequested} | ${matrix.elementsCached} | ${matrix.requests} | ${seconds.toFixed(2)} | ${megabytes.toFixed(1)}`,
    );
  }
}
await server.close();
