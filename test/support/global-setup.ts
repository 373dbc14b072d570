import { createServer, type Socket } from "node:net";
import type { TestProject } from "vitest/node";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type RunningEmulator, startDynamoDbLocal } from "#local/emulators";
import { provisionTable } from "#local/provision";
import { startLocalStack } from "#local/stack";
import { generateSigningKey, type SigningKey } from "#local/tokens";
import { routes } from "#functions/routes";
import { RouteAnswerLog } from "#test/support/failed-code-observations";
import { type FakeOsrm, startFakeOsrm } from "#test/support/fake-osrm";
import { testDefaultPlan, testPlans } from "#test/support/test-plans";

/**
 * Starts the same local stack `npm start` runs (DynamoDB Local, s3rver, local SQS, the local API
 * gateway), in memory and on free ports, once for the integration project. Test files reach it
 * through `inject` (see test/support/local-api.ts).
 */
declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    localEnvironment: Record<string, string>;
    signingKey: SigningKey;
    /** The strict project's own DynamoDB Local (its files' semantics proxies forward to it). */
    strictDynamoDbEndpoint: string;
  }
}

interface SharedStack {
  started: Promise<{
    stack: Awaited<ReturnType<typeof startLocalStack>>;
    signingKey: SigningKey;
    answers: RouteAnswerLog;
    osrm: FakeOsrm;
    silent: { url: string; close(): Promise<void> };
    tablesOnly: FakeOsrm;
  }>;
  /**
   * The strict files' DynamoDB Local, apart from the one the gateway uses: in a full run with one, it
   * used about one core through the DynamoDB-heavy stretches while the machine's other core idled
   * 20-30 % of the time (the files waited on it). The strict files (the import, the strict fuzzer,
   * the contention suites) are among its heaviest users; with their own they run beside the rest.
   */
  strictDynamoDb?: Promise<RunningEmulator>;
  users: number;
}

/**
 * One stack for every project that lists this setup (`integration`, and `strict`, whose files add
 * their own semantics proxy in front of the same DynamoDB Local: test/support/strict-dynamodb.ts).
 * Both run in vitest's main process, so the stack is kept on globalThis and stopped by the last.
 */
const shared = globalThis as { fieldOperationsTestStack?: SharedStack };

export default async function setup(project: TestProject) {
  // The handlers behind the gateway run in this process: their errors print (vitest.config.ts).
  process.env.LOG_LEVEL ??= "error";
  // Parent leases (docs/architecture.md, "Writes without shared items") measure from the confirming
  // read's start; DynamoDB Local under a 50-way burst on a shared machine answers in seconds.
  process.env.DYNAMODB_PARENT_LEASE_MS ??= "3000";
  shared.fieldOperationsTestStack ??= {
    users: 0,
    started: (async () => {
      const signingKey = generateSigningKey();
      const answers = new RouteAnswerLog();
      // A road-network engine for the travel-provider tests (test/http/road-travel.test.ts): a local server
      // speaking OSRM's table protocol over a deliberately asymmetric network, and one nothing listens on.
      const osrm = await startFakeOsrm({ maxTableSize: 4 });
      // One whose tables answer and whose route service refuses every request (OSRM's NoRoute): road geometry fails.
      const tablesOnly = await startFakeOsrm({ maxTableSize: 4, routeFault: () => ({ status: 400, code: "NoRoute" }) });
      // And one that accepts connections and never answers (test/http/run-budget.test.ts).
      const silent = await startSilentServer();
      const travelProviders = {
        providers: {
          "fake-osrm": { kind: "osrm", url: osrm.url, profile: "driving", maxTableSize: 4, concurrency: 2 },
          "down-osrm": { kind: "osrm", url: "http://127.0.0.1:9", retries: 1, timeoutMs: 2000 },
          "silent-osrm": { kind: "osrm", url: silent.url },
          "tables-only-osrm": { kind: "osrm", url: tablesOnly.url, profile: "driving", maxTableSize: 4, concurrency: 2 },
          // The same engine at a declared price, for the plans' dollar caps (test/http/road-spend.test.ts): $1 is 50 elements.
          "priced-osrm": { kind: "osrm", url: osrm.url, profile: "driving", maxTableSize: 4, concurrency: 2, pricePer1000Elements: 20 },
        },
      };
      const stack = await startLocalStack({
        port: 0,
        inMemory: true,
        stateDirectory: "",
        signingKey,
        runScheduler: false,
        planOverrides: { defaultPlan: testDefaultPlan, plans: [...testPlans] },
        observeRouteAnswers: (answer) => answers.record(answer),
        travelProviders,
      });
      return { stack, signingKey, answers, osrm, silent, tablesOnly };
    })(),
  };
  const entry = shared.fieldOperationsTestStack;
  entry.users += 1;
  const { stack, signingKey, answers, osrm, silent, tablesOnly } = await entry.started;
  project.provide("baseUrl", stack.baseUrl);
  project.provide("localEnvironment", {
    ...stack.environment,
    LOG_LEVEL: "silent",
    DYNAMODB_PARENT_LEASE_MS: process.env.DYNAMODB_PARENT_LEASE_MS ?? "3000",
  });
  project.provide("signingKey", signingKey);
  if (project.name === "strict") {
    entry.strictDynamoDb ??= (async () => {
      const emulator = await startDynamoDbLocal();
      const credentials = {
        accessKeyId: stack.environment.AWS_ACCESS_KEY_ID as string,
        secretAccessKey: stack.environment.AWS_SECRET_ACCESS_KEY as string,
      };
      const client = new DynamoDBClient({ region: stack.environment.AWS_REGION, credentials, endpoint: emulator.endpoint });
      await provisionTable(client, stack.environment.TABLE_NAME as string);
      client.destroy();
      return emulator;
    })();
    project.provide("strictDynamoDbEndpoint", (await entry.strictDynamoDb).endpoint);
  }
  project.onTestsRerun(() => reloadHandlerModules(project, stack));
  return async () => {
    entry.users -= 1;
    if (entry.users > 0) return;
    shared.fieldOperationsTestStack = undefined;
    await (await entry.strictDynamoDb)?.stop();
    await stack.stop();
    await osrm.close();
    await silent.close();
    await tablesOnly.close();
    // Every answer the suites saw must be one the route table (and so the OpenAPI document) declares.
    const undeclared = answers.undeclared(routes);
    if (undeclared.length > 0) {
      // Vitest reports a teardown error but keeps the run's exit code: set it, then report.
      process.exitCode = 1;
      throw new Error(
        `${undeclared.length} route answers the route table does not declare (add them to the route's responses[status].failedCodes):\n${undeclared.join("\n")}`,
      );
    }
  };
}

/**
 * Watch mode keeps this stack, and the handler modules its gateway imported (through this project's
 * Vite module runner), across reruns: an edited store would keep running its first-loaded code. Before
 * each rerun, drop the runner's evaluated modules (Vitest has already invalidated the edited files'
 * transforms) and the gateway's handlers, so the next request imports the edited code. The runner is
 * not public API: when it is not where expected, say so rather than run stale code silently.
 */
function reloadHandlerModules(project: TestProject, stack: { reloadHandlers(): void }): void {
  const runner = (project as unknown as { runner?: { evaluatedModules?: { clear(): void } } }).runner;
  if (!runner?.evaluatedModules) {
    process.stderr.write(
      "\nwatch mode: cannot reload the local gateway's handler modules (Vitest's module runner moved); HTTP tests run the code loaded at start: restart the watcher after editing functions/ or shared/.\n",
    );
    return;
  }
  runner.evaluatedModules.clear();
  stack.reloadHandlers();
}

/** A TCP server that accepts every connection and never answers (nor closes) it. */
async function startSilentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
