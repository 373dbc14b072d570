import type { TestProject } from "vitest/node";
import { startLocalStack } from "#local/stack";
import { generateSigningKey, type SigningKey } from "#local/tokens";
import { routes } from "#functions/routes";
import { RouteAnswerLog } from "#test/support/failed-code-observations";
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
  const answers = new RouteAnswerLog();
  const stack = await startLocalStack({
    port: 0,
    inMemory: true,
    stateDirectory: "",
    signingKey,
    runScheduler: false,
    planOverrides: { defaultPlan: testDefaultPlan, plans: [...testPlans] },
    observeRouteAnswers: (answer) => answers.record(answer),
  });
  project.provide("baseUrl", stack.baseUrl);
  project.provide("localEnvironment", { ...stack.environment, LOG_LEVEL: "silent" });
  project.provide("signingKey", signingKey);
  return async () => {
    await stack.stop();
    // Every answer the suites saw must be one the route table (and so the OpenAPI document) declares.
    const undeclared = answers.undeclared(routes);
    if (undeclared.length > 0) {
      // Vitest reports a teardown error but keeps the run's exit code: set it, then report.
      process.exitCode = 1;
      throw new Error(`${undeclared.length} route answers the route table does not declare (add them to the route's responses[status].failedCodes):\n${undeclared.join("\n")}`);
    }
  };
}
