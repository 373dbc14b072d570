// npm run bench:positions [-- --vehicles 1000] [-- --concurrency 16] [-- --json]
//
// Vehicle positions against the local stack (DynamoDB Local behind the semantics proxy capturing
// every call, capacity by local/dynamodb-capacity.ts, as bench:writes): `--vehicles` vehicles each
// report one sample every 30 s for 2 simulated minutes (4 rounds), then a 10× burst (10 samples
// per vehicle in the next 30 s, one report each). Simulated time: the samples' `at` step through
// the rounds (all within the last 24 h), the reports go as fast as `--concurrency` lets them.
// Printed: every report's answer (no sample lost: each answered 202 and each sample is in the
// history afterwards), write and read units per sample by phase, and the request latency (p50,
// p99) through the local gateway, which is the handler plus the gateway's own small share.
// docs/performance.md, "Vehicle positions", holds the figures.
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { BatchWriteCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";

process.env.LOG_LEVEL ??= "silent";
await import("#local/process-defaults");
const { costOf, summarize } = await import("#local/dynamodb-capacity");
const { documentClient, tableName } = await import("#shared/store/dynamo");
const { keys } = await import("#shared/store/keys");

const { values } = parseArgs({
  options: {
    vehicles: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "16" },
    json: { type: "boolean", default: false },
  },
});
const vehicleCount = Number(values.vehicles);
const concurrency = Number(values.concurrency);
if (!Number.isInteger(vehicleCount) || vehicleCount < 1 || vehicleCount > 5_000) throw new Error("usage: --vehicles <1..5000>");
if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 128) throw new Error("usage: --concurrency <1..128>");

const { captureStack } = await import("./support/capture-stack.ts");
const { stack, semantics, indexes, organizationId, call } = await captureStack({
  sub: "dispatcher",
  // The organization's call rate is the gateway's business, not what is measured here.
  planOverrides: { defaultPlan: "bench", plans: [{ name: "bench", description: "bench", rate: 10_000, burst: 5_000, maxRunsQueued: 5 }] },
});

/** Runs `work` over `items`, `concurrency` at a time. */
async function pool<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index] as T);
      }
    }),
  );
  return results;
}

await call("GET", "/vehicles");
const hubId = (await call("POST", "/hub", { name: "Depot", address: "Jl. 1", lat: -6.2, lng: 106.8 })).body.data._id as string;
// The vehicles are put straight into the table (what a report reads of them: hub, name, driver, and the
// by-hub index entry): creating a thousand vehicles through POST /vehicle is not what is measured.
const vehicleIds = Array.from({ length: vehicleCount }, () => randomUUID().replaceAll("-", "").slice(0, 24));
for (let i = 0; i < vehicleIds.length; i += 25)
  await documentClient().send(
    new BatchWriteCommand({
      RequestItems: {
        [tableName()]: vehicleIds.slice(i, i + 25).map((vehicleId, j) => ({
          PutRequest: {
            Item: {
              ...keys.vehicle(organizationId, vehicleId),
              GSI1PK: keys.vehiclesByHub(organizationId, hubId),
              GSI1SK: `${keys.vehiclePrefix}${vehicleId}`,
              entity: "vehicle",
              version: 1,
              _id: vehicleId,
              organizationId,
              hubId,
              name: `Van ${i + j}`,
              assignee: `driver-${i + j}`,
            },
          },
        })),
      },
    }),
  );
semantics.takeCaptured();

// Simulated clock: the first round's samples are 10 minutes old, rounds 30 s apart.
const start = Date.now() - 10 * 60_000;
interface Phase {
  name: string;
  reports: number;
  samples: number;
  statuses: Record<number, number>;
  counts: { accepted: number; duplicates: number; stale: number };
  latencies: number[];
  writeUnits: number;
  /** Of writeUnits: the month counter's chunk reservations (1 per 50 samples of a vehicle). */
  reservationUnits: number;
  readUnits: number;
  wallSeconds: number;
}
const phases: Phase[] = [];

async function phase(name: string, reports: Array<{ vehicleId: string; at: string }>) {
  const began = performance.now();
  const record: Phase = {
    name,
    reports: reports.length,
    samples: reports.length,
    statuses: {},
    counts: { accepted: 0, duplicates: 0, stale: 0 },
    latencies: [],
    writeUnits: 0,
    reservationUnits: 0,
    readUnits: 0,
    wallSeconds: 0,
  };
  await pool(reports, async ({ vehicleId, at }) => {
    const answer = await call("POST", `/vehicle/${vehicleId}/positions`, {
      positions: [{ at, lat: -6.2 + Math.random() / 10, lng: 106.8 + Math.random() / 10, speedKmh: 30, headingDeg: 90, accuracyM: 6 }],
    });
    record.statuses[answer.status] = (record.statuses[answer.status] ?? 0) + 1;
    record.latencies.push(answer.ms);
    if (answer.status === 202) for (const key of ["accepted", "duplicates", "stale"] as const) record.counts[key] += answer.body.data[key];
  });
  record.wallSeconds = (performance.now() - began) / 1000;
  process.stderr.write(`${name}: ${reports.length} reports in ${record.wallSeconds.toFixed(0)} s\n`);
  const calls = semantics.takeCaptured();
  const cost = summarize(calls, indexes);
  record.writeUnits = cost.writeUnits;
  // The month counter's key: its update names the USAGE partition (the request is in DynamoDB's wire JSON).
  record.reservationUnits = calls
    .filter((each) => each.operation === "UpdateItem" && JSON.stringify(each.request.Key ?? {}).includes("POSITIONS#"))
    .reduce((sum, each) => sum + costOf(each, indexes).writeUnits, 0);
  record.readUnits = cost.readUnits;
  phases.push(record);
}

for (let round = 0; round < 4; round++) {
  await phase(
    `steady round ${round + 1} (1 sample / vehicle / 30 s)`,
    vehicleIds.map((vehicleId, i) => ({ vehicleId, at: new Date(start + round * 30_000 + (i % 30_000)).toISOString() })),
  );
}
// The burst: 10 samples per vehicle in the next 30 s, interleaved across vehicles as devices would send them.
const burst: Array<{ vehicleId: string; at: string }> = [];
for (let k = 0; k < 10; k++)
  for (const [i, vehicleId] of vehicleIds.entries())
    burst.push({ vehicleId, at: new Date(start + 4 * 30_000 + k * 3_000 + (i % 3_000)).toISOString() });
await phase("burst (10× rate: 10 samples / vehicle / 30 s)", burst);

// No sample lost: every vehicle's history holds its 14 samples.
let stored = 0;
await pool(vehicleIds, async (vehicleId) => {
  let startKey: Record<string, unknown> | undefined;
  do {
    const output = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues: { ":pk": keys.vehiclePartition(organizationId, vehicleId), ":prefix": keys.vehiclePositionSamplePrefix },
        Select: "COUNT",
        ExclusiveStartKey: startKey,
      }),
    );
    stored += output.Count ?? 0;
    startKey = output.LastEvaluatedKey;
  } while (startKey);
});
semantics.takeCaptured();

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
const sent = phases.reduce((sum, each) => sum + each.samples, 0);
const all = phases.flatMap((each) => each.latencies).sort((a, b) => a - b);
const totalWrite = phases.reduce((sum, each) => sum + each.writeUnits, 0);
const totalRead = phases.reduce((sum, each) => sum + each.readUnits, 0);
const totalReservation = phases.reduce((sum, each) => sum + each.reservationUnits, 0);
const summary = {
  vehicles: vehicleCount,
  concurrency,
  samplesSent: sent,
  samplesStored: stored,
  lost: sent - stored,
  writeUnitsPerSample: totalWrite / sent,
  reservationUnitsPerSample: totalReservation / sent,
  readUnitsPerSample: totalRead / sent,
  p50Ms: percentile(all, 50),
  p99Ms: percentile(all, 99),
  phases: phases.map(({ latencies, ...rest }) => {
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      ...rest,
      writeUnitsPerSample: rest.writeUnits / rest.samples,
      readUnitsPerSample: rest.readUnits / rest.samples,
      reportsPerSecond: rest.reports / rest.wallSeconds,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
    };
  }),
};
await stack.stop();

if (values.json) console.log(JSON.stringify(summary, null, 2));
else {
  const fixed = (value: number, digits = 2) => value.toFixed(digits);
  console.log(`vehicles ${vehicleCount}, ${concurrency} reports at a time through the local gateway`);
  console.log(
    "| phase | reports | answers | accepted / dup / stale | WRU per sample | of which reservations | RRU per sample | reports/s | p50 ms | p99 ms |",
  );
  console.log("|---|---:|---|---|---:|---:|---:|---:|---:|---:|");
  for (const each of summary.phases)
    console.log(
      `| ${each.name} | ${each.reports} | ${Object.entries(each.statuses)
        .map(([status, count]) => `${count}× ${status}`)
        .join(
          ", ",
        )} | ${each.counts.accepted} / ${each.counts.duplicates} / ${each.counts.stale} | ${fixed(each.writeUnitsPerSample, 3)} | ${fixed(each.reservationUnits / each.samples, 3)} | ${fixed(each.readUnitsPerSample, 3)} | ${fixed(each.reportsPerSecond, 0)} | ${fixed(each.p50Ms, 1)} | ${fixed(each.p99Ms, 1)} |`,
    );
  console.log(
    `samples sent ${sent}, stored ${stored}, lost ${sent - stored}; write units per sample ${fixed(summary.writeUnitsPerSample, 3)} (target ≤ 2; ${fixed(summary.writeUnitsPerSample - summary.reservationUnitsPerSample, 3)} without the month counter's chunk reservations, 1 WRU per 50 samples of a vehicle), read units per sample ${fixed(summary.readUnitsPerSample, 3)}; request p50 ${fixed(summary.p50Ms, 1)} ms, p99 ${fixed(summary.p99Ms, 1)} ms`,
  );
}
const failed = sent !== stored || summary.writeUnitsPerSample - summary.reservationUnitsPerSample > 2;
process.exit(failed ? 1 : 0);
