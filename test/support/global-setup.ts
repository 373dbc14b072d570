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

interface SharedStack {
  started: Promise<{ stack: Awaited<ReturnType<typeof startLocalStack>>; signingKey: SigningKey }>;
  users: number;
}

/**
 * One stack for every project that lists this setup (`integration`, and `strict`, whose files add
 * their own semantics proxy in front of the same DynamoDB Local: test/support/strict-dynamodb.ts).
 * Both run in vitest's main process, so the stack is kept on globalThis and stopped by the last.
 */
const shared = globalThis as { fieldOperationsTestStack?: SharedStack };

export default async function setup(project: TestProject) {
  process.env.LOG_LEVEL ??= "silent";
  shared.fieldOperationsTestStack ??= {
    users: 0,
    started: (async () => {
      const signingKey = generateSigningKey();
      const stack = await startLocalStack({ port: 0, inMemory: true, stateDirectory: "", signingKey, runScheduler: false, planOverrides: { defaultPlan: testDefaultPlan, plans: [...testPlans] } });
      return { stack, signingKey };
    })(),
  };
  const entry = shared.fieldOperationsTestStack;
  entry.users += 1;
  const { stack, signingKey } = await entry.started;
  project.provide("baseUrl", stack.baseUrl);
  project.provide("localEnvironment", { ...stack.environment, LOG_LEVEL: "silent" });
  project.provide("signingKey", signingKey);
  return async () => {
    entry.users -= 1;
    if (entry.users > 0) return;
    shared.fieldOperationsTestStack = undefined;
    await stack.stop();
  };
}
