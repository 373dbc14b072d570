// npm run bench:cost [-- --repeat 5] [-- --json]
//
// The monthly AWS bill of the documented tenant mix (bench/cost-prices.ts: 20 tenants × 200,000
// calls a day, 70 % single reads, 25 % writes, 5 % list pages; routing runs; webhooks), per
// service, from units measured here and the prices of that one file:
// - DynamoDB units per call: the local stack runs behind the semantics proxy capturing every call
//   (as `npm run bench:writes` does) and local/dynamodb-capacity.ts prices them by the developer
//   guide's rules; each route below is called `--repeat` times on a fresh organization's data.
// - Log bytes per call: what the functions write to stdout at the deployed level (INFO), read from
//   the local logger's output while the call runs, plus one API Gateway access log line rendered from
//   the stack's own access log format with values of their real lengths; "before" adds the
//   `request completed` line every call logged at INFO until this round (it is still written at
//   DEBUG, where this bench reads it). CloudWatch bills 26 bytes more per event.
// - Lambda milliseconds per call, at the API functions' 512 MB: the CPU time this process spent on
//   the call (the handler, plus the local gateway's and proxy's share: a little more than the
//   function's own) plus DynamoDB's answer time per call it sent (`dynamodbCallMs`). Wall time on the
//   shared development machine depends on its load (DynamoDB Local answers in tens of ms there), so
//   it is printed beside, not billed.
// - Gateway calls, X-Ray traces (the stage's sampling rule before and after), SQS requests and
//   EventBridge events: counted from the mix.
// docs/performance.md, "Monthly cost", holds the table this prints.
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";

// Read the request lines at DEBUG (the deployed level is INFO: the bench tells them apart by level).
process.env.LOG_LEVEL = "debug";
// A loaded development machine answers slower than Lambda: no call here is a "slow request", so each
// logs what a normal call logs (a call over SLOW_REQUEST_MS on AWS adds one WARN line).
process.env.SLOW_REQUEST_MS = "60000";
delete process.env.POWERTOOLS_DEV;
await import("#local/process-defaults");
const { summarize } = await import("#local/dynamodb-capacity");
const { accessLogFormat } = await import("#infra/stacks/field-operations-stack");
const { prices, tenantMix } = await import("./cost-prices.ts");

const { values } = parseArgs({ options: { repeat: { type: "string", default: "5" }, json: { type: "boolean", default: false } } });
const repeat = Number(values.repeat);
if (!Number.isInteger(repeat) || repeat < 1 || repeat > 100) throw new Error("usage: --repeat <1..100>");

const { captureStack } = await import("./support/capture-stack.ts");
const { stack, semantics, indexes, call } = await captureStack();
type Answer = Awaited<ReturnType<typeof call>>;

// Every JSON line the process writes while a call runs (the handlers run in this process).
let captured: string[] = [];
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
  const lines = text.split("\n").filter((line) => line.trim().startsWith("{"));
  if (lines.length === 0) return write(chunk, ...(rest as []));
  captured.push(...lines);
  return true;
}) as typeof process.stdout.write;

type Kind = "get" | "write" | "list";
interface Sample {
  kind: Kind;
  route: string;
  wru: number;
  rru: number;
  logBytesAfter: number;
  logEventsAfter: number;
  completedLineBytes: number;
  wallMs: number;
  durationMs: number;
}
const samples: Sample[] = [];

async function measure(kind: Kind, route: string, method: string, path: string, body?: unknown): Promise<Answer> {
  semantics.takeCaptured();
  captured = [];
  const cpuBefore = process.cpuUsage();
  const answer = await call(method, path, body);
  const cpu = process.cpuUsage(cpuBefore);
  if (answer.status >= 400) throw new Error(`${route}: ${answer.status} ${JSON.stringify(answer.body)}`);
  const dynamodbCalls = semantics.takeCaptured();
  const cost = summarize(dynamodbCalls, indexes);
  const lines = captured.map((line) => JSON.parse(line) as Record<string, unknown> & { level?: string; message?: string });
  const kept = captured.filter((_, i) => lines[i]?.level !== "DEBUG");
  const completedIndex = lines.findIndex((line) => line.message === "request completed");
  const completed = lines[completedIndex];
  if (!completed) throw new Error(`${route}: no request completed line at DEBUG`);
  samples.push({
    kind,
    route,
    wru: cost.writeUnits,
    rru: cost.readUnits,
    logBytesAfter: kept.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0),
    logEventsAfter: kept.length,
    // The same line at INFO, as every call wrote it before: its newline in, "DEBUG"'s extra character out.
    completedLineBytes: Buffer.byteLength(captured[completedIndex] as string),
    wallMs: Number(completed.durationMs),
    // Billed on AWS: the CPU this process spent on the call (the handler, and the local gateway and
    // proxy, so a little more than the function's own) plus DynamoDB's answer time per call.
    durationMs: (cpu.user + cpu.system) / 1000 + dynamodbCalls.length * tenantMix.dynamodbCallMs,
  });
  return answer;
}
const idOf = (answer: Answer): string => answer.body?.data?._id ?? answer.body?.data_type?._id;

await call("GET", "/vehicles"); // warm-up: tenant enrolled, authorizer answer cached
const hubId = idOf(await call("POST", "/hub", { name: "Depot", address: "Jl. Sudirman 1, Jakarta", lat: -6.2, lng: 106.8 }));
const vehicleId = idOf(
  await call("POST", "/vehicle", { name: "Van 1", hubId, workingTime: { startTime: "07:00", endTime: "17:00", multiday: 0 } }),
);
const searchTypeId = idOf(
  await call("POST", "/data-type", {
    name: "Customer",
    fields: [
      { type: "title", title: "Name" },
      { id: "code", title: "Code", type: "text", required: false, unique: true },
      { id: "notes", title: "Notes", type: "text", required: false, searchable: true },
    ],
  }),
);
const visit = (i: number) => ({ hubId, name: `Customer ${i}`, address: `Jl. Thamrin ${i}`, coordinate: "-6.19,106.82", visitTime: 10 });
for (let i = 0; i < 30; i++) await call("POST", "/visit", visit(1000 + i));

for (let i = 0; i < repeat; i++) {
  // Writes: a visit created and changed, a vehicle changed, a searchable record created.
  const visitId = idOf(await measure("write", "POST /visit", "POST", "/visit", visit(i)));
  await measure("write", "PATCH /visit/{visitId}", "PATCH", `/visit/${visitId}`, { visitTime: 15 });
  await measure("write", "PATCH /vehicle/{vehicleId}", "PATCH", `/vehicle/${vehicleId}`, { name: `Van ${i}` });
  await measure("write", "POST /data (1 unique + 8 tokens)", "POST", "/data", {
    dataTypeId: searchTypeId,
    hubId,
    dataId: `Acme Trading ${i}`,
    code: `C-${i}`,
    notes: "north south east west red blue",
  });
  // Single reads.
  await measure("get", "GET /visit/{visitId}", "GET", `/visit/${visitId}`);
  await measure("get", "GET /vehicle/{vehicleId}", "GET", `/vehicle/${vehicleId}`);
  await measure("get", "GET /hub/{hubId}", "GET", `/hub/${hubId}`);
  // List pages (20 items, the default page).
  await measure("list", "GET /visits?hubId", "GET", `/visits?hubId=${hubId}`);
  await measure("list", "GET /vehicles", "GET", "/vehicles");
}
process.stdout.write = write;
await stack.stop();

// One access log line per call, from the stack's own format with values of their real lengths.
const typical: Record<string, string> = {
  "$context.requestId": randomUUID(),
  "$context.identity.sourceIp": "203.0.113.254",
  "$context.requestTime": "27/Nov/2026:18:05:00 +0000",
  "$context.httpMethod": "GET",
  "$context.resourcePath": "/visit/{visitId}",
  "$context.status": "200",
  "$context.protocol": "HTTP/1.1",
  "$context.responseLength": "612",
  "$context.authorizer.organizationId": "64b7f0c2a1e4d3b2c1a09f8e",
  "$context.authorizer.principalId": "64b7f0c2a1e4d3b2c1a09f8f",
  "$context.identity.apiKeyId": "a1b2c3d4e5",
  "$context.responseLatency": "48",
  "$context.integration.latency": "41",
  "$context.integration.status": "200",
  "$context.error.message": "-",
  "$context.error.responseType": "-",
  "$context.integration.error": "-",
  "$context.xrayTraceId": "1-6567a0b4-3c2f1e0d9a8b7c6d5e4f3a2b",
};
const accessLogBytes =
  Buffer.byteLength(
    accessLogFormat()
      .toString()
      .replace(/\$context\.[A-Za-z.]+/g, (name: string) => typical[name] ?? (name as string)),
  ) + 1;

// The fields the access log line had before this round (it dropped them: docs/operations.md), with the same typical values.
const droppedAccessFields = {
  requestTime: typical["$context.requestTime"],
  protocol: "HTTP/1.1",
  responseLength: "612",
  integrationStatus: "200",
  xrayTraceId: typical["$context.xrayTraceId"],
};
const accessLogBytesBefore = accessLogBytes + Buffer.byteLength(JSON.stringify(droppedAccessFields)) - 2 + 1;

// ---------------------------------------------------------------- per kind of call
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
const perKind = Object.fromEntries(
  (["get", "write", "list"] as const).map((kind) => {
    const of = samples.filter((sample) => sample.kind === kind);
    return [
      kind,
      {
        routes: [...new Set(of.map((sample) => sample.route))],
        wru: mean(of.map((s) => s.wru)),
        rru: mean(of.map((s) => s.rru)),
        functionLogBytesAfter: mean(of.map((s) => s.logBytesAfter)),
        functionLogEventsAfter: mean(of.map((s) => s.logEventsAfter)),
        functionLogBytesBefore: mean(of.map((s) => s.logBytesAfter + s.completedLineBytes)),
        functionLogEventsBefore: mean(of.map((s) => s.logEventsAfter + 1)),
        durationMs: mean(of.map((s) => s.durationMs)),
        wallMs: mean(of.map((s) => s.wallMs)),
      },
    ];
  }),
) as Record<
  Kind,
  {
    routes: string[];
    wru: number;
    rru: number;
    functionLogBytesAfter: number;
    functionLogEventsAfter: number;
    functionLogBytesBefore: number;
    functionLogEventsBefore: number;
    durationMs: number;
    wallMs: number;
  }
>;

// ---------------------------------------------------------------- the bill
const mix = tenantMix;
const callsPerMonth = mix.tenants * mix.callsPerTenantPerDay * mix.daysPerMonth;
const callsOf = (kind: Kind) => callsPerMonth * mix.share[kind];
const secondsPerMonth = mix.daysPerMonth * 86_400;
const kinds = ["get", "write", "list"] as const;

/** Log bytes billed per call (lines, the access line, CloudWatch's per-event overhead). */
const billedLogBytes = (kind: Kind, when: "before" | "after") => {
  const k = perKind[kind];
  const functionBytes = when === "before" ? k.functionLogBytesBefore : k.functionLogBytesAfter;
  const events = (when === "before" ? k.functionLogEventsBefore : k.functionLogEventsAfter) + 1;
  return functionBytes + (when === "before" ? accessLogBytesBefore : accessLogBytes) + events * prices.logEventOverheadBytes;
};

function bill(when: "before" | "after") {
  const apiGateway = (callsPerMonth / 1e6) * prices.apiGatewayPerMillionCalls;
  const wru = kinds.reduce((sum, kind) => sum + callsOf(kind) * perKind[kind].wru, 0);
  const rru = kinds.reduce((sum, kind) => sum + callsOf(kind) * perKind[kind].rru, 0);
  const dynamodb = (wru / 1e6) * prices.dynamodbPerMillionWru + (rru / 1e6) * prices.dynamodbPerMillionRru;
  const authorizerInvocations = callsPerMonth / mix.callsPerAuthorizerInvocation;
  const invocations =
    callsPerMonth + authorizerInvocations + mix.runsPerMonth * (1 + mix.webhookDeliveriesPerRun) + mix.tickInvocationsPerMonth;
  const apiGbSeconds = kinds.reduce((sum, kind) => sum + callsOf(kind) * (perKind[kind].durationMs / 1000) * 0.5, 0);
  const runGbSeconds = mix.runsPerMonth * mix.runWorkerSecondsPerRun * (mix.runWorkerMemoryMb / 1024);
  const lambda = (invocations / 1e6) * prices.lambdaPerMillionRequests + (apiGbSeconds + runGbSeconds) * prices.lambdaArmPerGbSecond;
  const logGb = kinds.reduce((sum, kind) => sum + callsOf(kind) * billedLogBytes(kind, when), 0) / 1e9;
  const logPrice = when === "before" ? prices.logsStandardPerGb : prices.logsInfrequentAccessPerGb;
  const logs = logGb * logPrice;
  const sampling = when === "before" ? mix.xraySamplingBefore : mix.xraySamplingAfter;
  const reservoir = Math.min(callsPerMonth, sampling.reservoirPerSecond * secondsPerMonth);
  const traces = reservoir + sampling.rate * (callsPerMonth - reservoir) + mix.runsPerMonth + mix.tickInvocationsPerMonth;
  const xray = (traces / 1e6) * prices.xrayPerMillionTraces;
  const messages = mix.runsPerMonth * (1 + mix.webhookDeliveriesPerRun);
  const queuesAndEvents =
    ((messages * 3) / 1e6) * prices.sqsPerMillionRequests + (mix.runsPerMonth / 1e6) * prices.eventBridgePerMillionEvents;
  const services = {
    "API Gateway (REST)": { units: `${(callsPerMonth / 1e6).toFixed(0)} M calls`, dollars: apiGateway },
    DynamoDB: { units: `${(wru / 1e6).toFixed(0)} M WRU, ${(rru / 1e6).toFixed(0)} M RRU`, dollars: dynamodb },
    "CloudWatch Logs": { units: `${logGb.toFixed(1)} GB ${when === "before" ? "Standard" : "Infrequent Access"}`, dollars: logs },
    Lambda: {
      units: `${(invocations / 1e6).toFixed(1)} M invocations, ${((apiGbSeconds + runGbSeconds) / 1e6).toFixed(2)} M GB-s`,
      dollars: lambda,
    },
    "X-Ray": { units: `${(traces / 1e6).toFixed(2)} M traces`, dollars: xray },
    "SQS + EventBridge": {
      units: `${(messages / 1e3).toFixed(1)} k messages, ${(mix.runsPerMonth / 1e3).toFixed(1)} k events`,
      dollars: queuesAndEvents,
    },
  };
  const total = Object.values(services).reduce((sum, service) => sum + service.dollars, 0);
  return { services, total };
}

/**
 * Road-engine elements per run, measured with the product's own matrix builder (shared/domain/travel/road-matrix.ts)
 * and an in-memory cache over a synthetic engine: a hub's first run, then a day with `newPointShare` new points.
 */
async function roadEngineElements() {
  const { buildRoadMatrix } = await import("#shared/domain/travel/road-matrix");
  const { admitBlock, bestBlock } = await import("#shared/domain/travel/matrix-cache-index");
  const road = mix.roadEngine;
  const point = (i: number) => ({ lat: 40.7 + 0.0003 * (i % 200), lng: -74 + 0.0003 * Math.floor(i / 200) });
  const source = {
    kind: "synthetic",
    maxSources: 300,
    maxDestinations: 500,
    concurrency: 1,
    timeoutMs: 10_000,
    retries: 0,
    async table(_points: unknown, sources: readonly number[], destinations: readonly number[]) {
      const rows = sources.map(() => destinations.map(() => 60));
      return { durationsSeconds: rows, distancesMetres: rows };
    },
  };
  // The bounded cache's policy over blocks kept in memory (shared/travel/matrix-cache.ts keeps them in S3).
  const blocks = new Map<string, import("#shared/domain/travel/road-matrix").CachedMatrix>();
  let index = { blocks: [] as import("#shared/domain/travel/matrix-cache-index").CacheBlock[] };
  const ttl = 30 * 86_400_000;
  const run = async (locations: { lat: number; lng: number }[], now: number) => {
    let base: string | undefined;
    const matrix = await buildRoadMatrix({
      locations,
      source,
      cacheTtlMs: ttl,
      now: () => now,
      cache: {
        async read(keys) {
          const block = bestBlock(index, keys, now, ttl);
          base = block?.id;
          const stored = block && blocks.get(block.id);
          return (
            stored && {
              keys: stored.keys,
              fetchedAt: stored.fetchedAt,
              durationsSeconds: stored.durationsSeconds,
              distancesMetres: stored.distancesMetres,
            }
          );
        },
        async write(written) {
          const id = randomUUID();
          blocks.set(id, written);
          index = admitBlock(
            index,
            { id, keys: written.keys, fetchedAt: written.fetchedAt, usedAt: now },
            { maxPoints: 5_000, now, ttlMs: ttl, baseId: base },
          ).index;
        },
      },
    });
    return matrix.elementsRequested;
  };
  const n = road.pointsPerRun;
  const kept = Math.round(n * (1 - road.newPointShare));
  const first = await run(
    Array.from({ length: n }, (_, i) => point(i)),
    0,
  );
  const nextDay = await run(
    [...Array.from({ length: kept }, (_, i) => point(i)), ...Array.from({ length: n - kept }, (_, i) => point(10_000 + i))],
    86_400_000,
  );
  return { first, nextDay };
}

const roadElements = await roadEngineElements();
const roadElementsPerMonth = mix.tenants * mix.roadEngine.newDayRunsPerTenantPerMonth * roadElements.nextDay;
const roadDollars = (elements: number) => (elements / 1000) * prices.amazonLocationPer1000Elements;

const before = bill("before");
const after = bill("after");
const dollars = (value: number) => `$${value.toFixed(2)}`;
const share = (value: number, total: number) => `${((100 * value) / total).toFixed(0)} %`;

if (values.json) {
  console.log(JSON.stringify({ perKind, accessLogBytes, before, after, callsPerMonth, roadElements, roadElementsPerMonth }, null, 2));
} else {
  console.log(
    `Measured per call (mean of ${repeat} rounds; DynamoDB units from the captured requests, log bytes from the logger's output):`,
  );
  console.log(
    "| kind | routes | WRU | RRU | function log bytes before → after | access log line before → after | Lambda ms billed (local wall ms) |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const kind of kinds) {
    const k = perKind[kind];
    console.log(
      `| ${kind} | ${k.routes.join(", ")} | ${k.wru.toFixed(2)} | ${k.rru.toFixed(2)} | ${k.functionLogBytesBefore.toFixed(0)} → ${k.functionLogBytesAfter.toFixed(0)} | ${accessLogBytesBefore} → ${accessLogBytes} | ${k.durationMs.toFixed(1)} (${k.wallMs.toFixed(0)}) |`,
    );
  }
  console.log("");
  for (const route of [...new Set(samples.map((sample) => sample.route))]) {
    const of = samples.filter((sample) => sample.route === route);
    console.log(`  ${route}: ${mean(of.map((s) => s.wru)).toFixed(2)} WRU, ${mean(of.map((s) => s.rru)).toFixed(2)} RRU per call`);
  }
  console.log("");
  for (const kind of ["get", "write"] as const) {
    const was = billedLogBytes(kind, "before");
    const now = billedLogBytes(kind, "after");
    console.log(
      `Log bytes per ${kind === "get" ? "GET" : "write"} (billed: lines + access line + 26 B per event): before ${was.toFixed(0)}, after ${now.toFixed(0)} = ${share(now, was)} of before${kind === "get" ? ` (target ≤ 40 %: ${now <= 0.4 * was ? "met" : "missed"})` : ""}`,
    );
  }
  console.log("");
  console.log(
    `Monthly bill, ${mix.tenants} tenants × ${mix.callsPerTenantPerDay.toLocaleString("en-US")} calls/day (${(callsPerMonth / 1e6).toFixed(0)} M calls/month; 70 % GET, 25 % writes, 5 % lists), ${mix.runsPerMonth.toLocaleString("en-US")} runs, us-east-1 list prices (bench/cost-prices.ts):`,
  );
  console.log("| service | units after | before | after | share after |");
  console.log("|---|---|---|---|---|");
  for (const [name, service] of Object.entries(after.services)) {
    const was = before.services[name as keyof typeof before.services];
    console.log(
      `| ${name} | ${service.units} | ${dollars(was.dollars)} | ${dollars(service.dollars)} | ${share(service.dollars, after.total)} |`,
    );
  }
  console.log(`| **total** | | **${dollars(before.total)}** | **${dollars(after.total)}** | |`);
  console.log(
    `| per million calls | | ${dollars((before.total / callsPerMonth) * 1e6)} | ${dollars((after.total / callsPerMonth) * 1e6)} | |`,
  );
  const road = mix.roadEngine;
  console.log("");
  console.log(
    `Road engine (Amazon Location at $${prices.amazonLocationPer1000Elements} per 1,000 elements; not in the total above): ${road.pointsPerRun} points per run, ` +
      `elements asked by a hub's first run ${roadElements.first.toLocaleString("en-US")} (${dollars(roadDollars(roadElements.first))}), ` +
      `by a day with ${100 * road.newPointShare} % new points ${roadElements.nextDay.toLocaleString("en-US")} (${((100 * roadElements.nextDay) / roadElements.first).toFixed(1)} %, ${dollars(roadDollars(roadElements.nextDay))}); ` +
      `${mix.tenants} tenants × ${road.newDayRunsPerTenantPerMonth} such days: ${(roadElementsPerMonth / 1e6).toFixed(2)} M elements, ${dollars(roadDollars(roadElementsPerMonth))} a month ` +
      `(${dollars(roadDollars(roadElementsPerMonth) / mix.tenants)} per tenant; the first runs add ${dollars(roadDollars(mix.tenants * roadElements.first))} once).`,
  );
}
