// npm run bench:authorizer [-- --calls 1000]
//
// What the tenant authorizer costs. Starts DynamoDB Local (the same authorizer module
// API Gateway runs, behind the local gateway's copy of API Gateway's result cache), then sends
// `--calls` sequential GET /vehicles with ONE token to two gateways over the same store: one
// caching the authorizer's answer per token (300 s, the stack's default) and one not caching
// (TTL 0: the authorizer runs for every call). It prints the authorizer invocations per 1,000
// calls of each, and the median and p95 end-to-end latency of a call, so the difference is what
// an authorizer invocation adds locally (JWT verification against the cached JWKS plus the tenant
// GetItem on DynamoDB Local). The benchmark plan has no limits, so no call is throttled.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { routes } from "#functions/routes";
import { authorizerEntry, LocalAuthorizer } from "#local/authorizer";
import { createGateway } from "#local/gateway";
import { repositoryRoot } from "#infra/repository-root";
import { generateSigningKey, localAudience, localIssuer, mintToken } from "#local/tokens";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { startDynamoDbLocal } from "#local/emulators";
import { provisionTable } from "#local/provision";
import { resetAppConfig } from "#shared/config/env";
import { LocalUsagePlans } from "#local/usage-plans";
import { permissionSlugs } from "#functions/routes";
import { configuredPlans, resetConfiguredPlans } from "#shared/config/tenant-plans";

const { values } = parseArgs({ options: { calls: { type: "string", default: "1000" } } });
const calls = Number(values.calls);
if (!Number.isInteger(calls) || calls < 10) throw new Error("usage: --calls <n ≥ 10>");

process.env.LOG_LEVEL = "silent";
const signingKey = generateSigningKey();
// BENCH_DYNAMODB_ENDPOINT: a DynamoDB Local already running (on a loaded machine its start can take longer than the starter waits).
const dynamo = process.env.BENCH_DYNAMODB_ENDPOINT
  ? { endpoint: process.env.BENCH_DYNAMODB_ENDPOINT, stop: async () => undefined }
  : await startDynamoDbLocal();
const tableName = `bench-authorizer-${Date.now()}`;
Object.assign(process.env, {
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "local",
  AWS_SECRET_ACCESS_KEY: "local",
  AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  TABLE_NAME: tableName,
  JWT_ISSUER: localIssuer,
  JWT_AUDIENCE: localAudience,
  JWT_JWKS_JSON: JSON.stringify(signingKey.jwks),
  POWERTOOLS_METRICS_DISABLED: "true",
  POWERTOOLS_TRACE_ENABLED: "false",
  TENANT_AUTO_ENROLL: "true",
  TENANT_PLANS_JSON: JSON.stringify({
    defaultPlan: "bench",
    plans: [{ name: "bench", description: "no limits", rate: 10_000, burst: 5_000, maxRunsQueued: 5 }],
  }),
});
resetAppConfig();
resetConfiguredPlans();
await provisionTable(new DynamoDBClient({ endpoint: dynamo.endpoint }), tableName);
const stack = { stop: () => dynamo.stop() };

async function gatewayWith(cacheTtlSeconds: number): Promise<{ url: string; authorizer: LocalAuthorizer; server: Server }> {
  const authorizer = new LocalAuthorizer({ modulePath: resolve(repositoryRoot, authorizerEntry), cacheTtlSeconds });
  const server = createGateway({
    routes,
    basePath: "/v3",
    rootDirectory: repositoryRoot,
    authorizer,
    usagePlans: new LocalUsagePlans(configuredPlans()),
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v3`, authorizer, server };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;

async function measure(label: string, cacheTtlSeconds: number) {
  const gateway = await gatewayWith(cacheTtlSeconds);
  const token = mintToken(signingKey, { sub: "bench", organizationId: `org-bench-${cacheTtlSeconds}`, permissions: [...permissionSlugs] });
  const call = async () => {
    const started = performance.now();
    const response = await fetch(`${gateway.url}/vehicles`, { headers: { authorization: `Bearer ${token}` } });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${label}: GET /vehicles answered ${response.status}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 20; i++) await call(); // warm-up: modules loaded, connections open
  const before = gateway.authorizer.invocations;
  const times: number[] = [];
  for (let i = 0; i < calls; i++) times.push(await call());
  const invocations = gateway.authorizer.invocations - before;
  times.sort((a, b) => a - b);
  gateway.server.closeAllConnections();
  gateway.server.close();
  return { label, invocationsPer1000: (invocations / calls) * 1000, median: percentile(times, 50), p95: percentile(times, 95) };
}

try {
  const cached = await measure("cached (TTL 300 s)", 300);
  const uncached = await measure("not cached (TTL 0)", 0);
  const row = (r: typeof cached) =>
    `${r.label.padEnd(20)} ${r.invocationsPer1000.toFixed(1).padStart(8)}   ${r.median.toFixed(2).padStart(7)} ms   ${r.p95.toFixed(2).padStart(7)} ms`;
  process.stdout.write(
    [
      `${calls} sequential GET /vehicles with one token through the local gateway`,
      `${"authorizer".padEnd(20)} ${"inv/1000".padStart(8)}   ${"median".padStart(10)}   ${"p95".padStart(10)}`,
      row(cached),
      row(uncached),
      `an authorizer invocation adds about ${(uncached.median - cached.median).toFixed(2)} ms (median) to a call; a cached answer adds none`,
      "",
    ].join("\n"),
  );
} finally {
  await stack.stop();
}
