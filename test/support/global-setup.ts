import type { TestProject } from "vitest/node";
import { startLocalStack } from "#local/stack";
import { generateSigningKey, type SigningKey } from "#local/tokens";
import { startFakeOsrm } from "#test/support/fake-osrm";
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
  }
}

export default async function setup(project: TestProject) {
  process.env.LOG_LEVEL ??= "silent";
  const signingKey = generateSigningKey();
  // A road-network engine for the travel-provider tests (test/http/road-travel.test.ts): a local server
  // speaking OSRM's table protocol over a deliberately asymmetric network, and one nothing listens on.
  const osrm = await startFakeOsrm({ maxTableSize: 4 });
  const travelProviders = {
    providers: {
      "fake-osrm": { kind: "osrm", url: osrm.url, profile: "driving", maxTableSize: 4, concurrency: 2 },
      "down-osrm": { kind: "osrm", url: "http://127.0.0.1:9", retries: 1, timeoutMs: 2000 },
    },
  };
  const stack = await startLocalStack({
    port: 0,
    inMemory: true,
    stateDirectory: "",
    signingKey,
    runScheduler: false,
    planOverrides: { defaultPlan: testDefaultPlan, plans: [...testPlans] },
    travelProviders,
  });
  project.provide("baseUrl", stack.baseUrl);
  project.provide("localEnvironment", { ...stack.environment, LOG_LEVEL: "silent" });
  project.provide("signingKey", signingKey);
  return async () => {
    await stack.stop();
    await osrm.close();
  };
}
