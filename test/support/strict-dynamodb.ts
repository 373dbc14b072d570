import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { afterAll, inject } from "vitest";
import { repositoryRoot } from "#infra/repository-root";
import { routes } from "#functions/routes";
import { createGateway } from "#local/gateway";
import { authorizerEntry, LocalAuthorizer } from "#local/authorizer";
import { LocalUsagePlans } from "#local/usage-plans";
import { invokeHandler } from "#local/invocation";
import {
  defaultSemanticsOptions,
  type DynamoDbSemanticsOptions,
  type DynamoDbSemanticsProxy,
  startDynamoDbSemanticsProxy,
  strictSemanticsOptions,
} from "#local/dynamodb-semantics";
import { resetAppConfig } from "#shared/config/env";
import { configuredPlans, resetConfiguredPlans } from "#shared/config/tenant-plans";
import { defaultAuthorizerCacheTtlSeconds } from "#shared/domain/tenants/access";

/**
 * Runs this test file under production DynamoDB semantics (local/dynamodb-semantics.ts): a
 * semantics proxy of the file's own in front of the strict files' DynamoDB Local, every DynamoDB client
 * of the file's process pointed at it, and a local gateway of the file's own (the same route
 * table, authorizer and usage plans as `npm start`) whose handlers run in this process, so HTTP
 * calls made with test/support/local-api.ts go through it.
 *
 * Files opt in by name: vitest.config.ts runs the files of the `strict` project (the concurrency,
 * import and tick suites, and every `*.strict.test.ts`) with this module as a setup file. A test
 * tunes the proxy (throttling, index lag, holds) through `strictDynamoDb()`; each file starts with
 * `strictSemanticsOptions` (conflicts on, a 10 ms hold), and `resetStrictDynamoDb()` puts them back.
 */
let proxy: DynamoDbSemanticsProxy | undefined;
let gateway: Server | undefined;

// The strict project's own DynamoDB Local (test/support/global-setup.ts), with the same table: every
// direct client of this file (usage counters, the fuzz oracle's stream reader) goes there too.
const dynamodbLocal = inject("strictDynamoDbEndpoint");
if (!dynamodbLocal) throw new Error("strict-dynamodb: the suite's setup did not say where the strict files' DynamoDB Local is");
process.env.DYNAMODB_LOCAL_ENDPOINT = dynamodbLocal;

/**
 * `STRICT_DYNAMODB_MODEL=off` runs the strict files with the model off (no conflicts, throttles,
 * index lag or holds, whatever a test configures): every strict file must then fail, which shows it
 * depends on the model (the check below).
 */
const modelOff = process.env.STRICT_DYNAMODB_MODEL === "off";
const offOptions: Partial<DynamoDbSemanticsOptions> = { conflicts: false, transactionHoldMs: 0, throttleRate: 0, indexLag: 0 };
proxy = await startDynamoDbSemanticsProxy(dynamodbLocal, modelOff ? offOptions : strictSemanticsOptions);
if (modelOff) {
  const configure = proxy.configure.bind(proxy);
  proxy.configure = (options) => configure({ ...options, ...offOptions });
}

/**
 * What the model did in this file (conflicts and throttles counted, across every resetCounters): a
 * strict file in which it never acted would pass just as well without production semantics.
 */
const acted = { conflicts: 0, throttles: 0 };
const model = proxy; // the hook below may run after the proxy was stopped and forgotten
const harvest = () => {
  const counters = model.counters();
  acted.conflicts += counters.transactionConflicts + counters.singleWriteConflicts;
  acted.throttles += counters.throttledCalls + counters.throttledBatchItems;
};
const resetCounters = model.resetCounters.bind(model);
model.resetCounters = () => {
  harvest();
  resetCounters();
};
let exemption: string | undefined;
/** A file whose tests do not (yet) meet the model says why; the check below then passes it. Keep the list at zero. */
export function modelNeedNotAct(reason: string): void {
  exemption = reason;
}
afterAll(() => {
  harvest();
  resetCounters();
  if (acted.conflicts + acted.throttles === 0 && exemption === undefined)
    throw new Error(
      "The strict DynamoDB model never acted in this file (no transaction conflict, write conflict or throttle counted): its tests would pass without production semantics. Make one of them meet the model (test/support/strict-dynamodb.ts).",
    );
});
process.env.AWS_ENDPOINT_URL_DYNAMODB = proxy.endpoint;
resetAppConfig();
resetConfiguredPlans();
gateway = createGateway({
  routes,
  basePath: "/v3",
  rootDirectory: repositoryRoot,
  authorizer: new LocalAuthorizer({
    modulePath: resolve(repositoryRoot, authorizerEntry),
    cacheTtlSeconds: defaultAuthorizerCacheTtlSeconds,
  }),
  usagePlans: new LocalUsagePlans(configuredPlans()),
});
await new Promise<void>((listening) => (gateway as Server).listen(0, "127.0.0.1", listening));
// The local runtime tells Powertools it runs invocations concurrently (local/invocation.ts), which
// makes Powertools require an invocation scope; this file's tests also call job handlers directly,
// outside any, as the shared stack's test files do. Create the scope store now, then take the
// setting back: the gateway's handlers still run in their scopes, Powertools keeps process-wide state.
await invokeHandler(async () => undefined, {}, { awsRequestId: "strict-setup" } as Parameters<typeof invokeHandler>[2]);
delete process.env.AWS_LAMBDA_MAX_CONCURRENCY;
process.env.TEST_API_BASE_URL = `http://127.0.0.1:${((gateway as Server).address() as AddressInfo).port}/v3`;

afterAll(async () => {
  const closing = gateway;
  gateway = undefined;
  if (closing) {
    closing.closeAllConnections();
    await new Promise<void>((closed) => closing.close(() => closed()));
  }
  await proxy?.stop();
  proxy = undefined;
});

/** The semantics proxy of this file (only in files of the `strict` project). */
export function strictDynamoDb(): DynamoDbSemanticsProxy {
  if (!proxy) throw new Error("strictDynamoDb(): this file does not run under strict semantics (see test/support/strict-dynamodb.ts)");
  return proxy;
}

/** Puts the file's proxy back to the strict preset (after a test changed throttling, lag or holds). */
export function resetStrictDynamoDb(overrides: Partial<DynamoDbSemanticsOptions> = {}): DynamoDbSemanticsProxy {
  const semantics = strictDynamoDb();
  semantics.releaseHeldTransactions();
  semantics.configure({ ...defaultSemanticsOptions, throttleOperations: undefined, ...strictSemanticsOptions, ...overrides });
  semantics.resetCounters();
  return semantics;
}
