import type { TestProject } from "vitest/node";
import { startLocalStack } from "#local/stack";
import { generateSigningKey, type SigningKey } from "#local/tokens";
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
  const stack = await startLocalStack({ port: 0, inMemory: true, stateDirectory: "", signingKey, runScheduler: false, planOverrides: { defaultPlan: testDefaultPlan, plans: [...testPlans] } });
  project.provide("baseUrl", stack.baseUrl);
  project.provide("localEnvironment", { ...stack.environment, LOG_LEVEL: "silent" });
  project.provide("signingKey", signingKey);
  return async () => {
    await stack.stop();
  };
}
