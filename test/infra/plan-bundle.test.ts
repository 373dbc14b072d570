import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { routingResultRoutes } from "#functions/http/routing-results/routes";
import { recordRoutes } from "#functions/http/data/routes";
import { dataTypeRoutes } from "#functions/http/data-types/routes";
import { bundleEntries } from "#infra/bundling";
import { repositoryRoot } from "#infra/repository-root";
import type { configuredPlans } from "#shared/config/tenant-plans";
import { synthesize } from "./synthesize.ts";

/**
 * One plan source on AWS: the operator's plan document is fixed at synth time and bundled into the
 * functions' code (an esbuild define), not passed in environment variables (4 KB for all of them).
 */
const tiny = {
  name: "tiny-operator-plan",
  description: "3 run-seconds a month, 1 run queued",
  rate: 5,
  burst: 5,
  runSecondsPerMonth: 3,
  maxRunsQueued: 1,
};
const document = { plans: [tiny] };
const outdirs: string[] = [];
const outdir = (prefix: string) => {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  outdirs.push(directory);
  return directory;
};
afterAll(() => {
  for (const directory of outdirs) rmSync(directory, { recursive: true, force: true });
});

// Bundled synths: a hang guard sized like the stack test's bundling test (14–31 s at a load of 4–9, longer under heavier load).
describe("The plan document in the bundles", { timeout: 600_000 }, () => {
  it("is what configuredPlans reads in a bundle, whatever the environment says", () => {
    const entry = "shared/config/tenant-plans.ts";
    const bundles = bundleEntries([entry], { repositoryRoot, outdir: outdir("plan-bundle-"), sourceMaps: false, planOverrides: document });
    const bundled = createRequire(import.meta.url)(join(bundles.get(entry)!, "index.js")) as { configuredPlans: typeof configuredPlans };
    const saved = process.env.TENANT_PLANS_JSON;
    process.env.TENANT_PLANS_JSON = JSON.stringify({ plans: [] });
    try {
      expect(bundled.configuredPlans().named(tiny.name)).toEqual(tiny);
    } finally {
      if (saved === undefined) delete process.env.TENANT_PLANS_JSON;
      else process.env.TENANT_PLANS_JSON = saved;
    }
  });

  it("reaches every function that enforces a limit when the stack is synthesized with bundling", () => {
    const assemblyDirectory = outdir("cdk-plan-bundle-");
    const synthesized = synthesize(assemblyDirectory, {
      context: { "aws:cdk:bundling-stacks": ["**"] },
      routes: [routingResultRoutes.create, recordRoutes.create, dataTypeRoutes.import],
      planOverrides: document,
    });
    const codeOf = new Map<string, string>();
    for (const { template } of synthesized.templates) {
      for (const [logicalId, lambda] of Object.entries(template.findResources("AWS::Lambda::Function"))) {
        const key = String(lambda.Properties.Code?.S3Key ?? "");
        const file = join(assemblyDirectory, `asset.${key.replace(/\.zip$/, "")}`, "index.js");
        if (existsSync(file)) codeOf.set(logicalId, readFileSync(file, "utf8"));
      }
    }
    const bundleOf = (functionId: string) =>
      [...codeOf].find(([logicalId]) => new RegExp(`^${functionId}[0-9A-F]{8}$`).test(logicalId))?.[1];
    // The authorizer (usage-plan keys), on-demand runs (quota and cap), the tick (cap), imports (records, concurrency, size). Any other
    // function that reads configuredPlans gets the same constant (the define is in every bundle).
    for (const functionId of [
      "TenantAuthorizerFunction",
      "createRoutingResultFunction",
      "SchedulerTickFunction",
      "importDataTypeFunction",
    ]) {
      const code = bundleOf(functionId);
      expect(code, functionId).toBeDefined();
      expect(code?.includes(tiny.name), functionId).toBe(true);
    }
    // A function that enforces no plan limit carries no plan document.
    expect(bundleOf("createRecordFunction")?.includes(tiny.name)).toBe(false);
  });
});
