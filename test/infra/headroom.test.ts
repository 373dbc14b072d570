import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import type { RouteDefinition } from "#shared/http/route";
import { synthesize, type SynthesizedStack } from "./synthesize.ts";

/** CloudFormation allows 500 resources per template; every template must stay below 60 % of it. */
const resourceLimit = 500;
const headroomLimit = resourceLimit * 0.6;

/**
 * The route table three times over: each copy gets new operation ids and paths (the first path
 * segment suffixed), reusing the same handlers, so each area holds three times its routes.
 */
function tripledRoutes(): RouteDefinition[] {
  return [1, 2, 3].flatMap((copy) =>
    routes.map((route) =>
      copy === 1
        ? route
        : { ...route, operationId: `${route.operationId}Copy${copy}`, path: route.path.replace(/^\/([^/]+)/, `/$1-copy${copy}`) },
    ),
  );
}

function printCounts(label: string, synthesized: SynthesizedStack) {
  const lines = synthesized.templates.map(({ name, resourceCount }) => `  ${String(resourceCount).padStart(3)}  ${name}`);
  console.log(`${label}: resources per template (limit ${resourceLimit}, test bound ${headroomLimit})\n${lines.join("\n")}`);
}

/** The messages CDK attaches to the stacks (its "Number of resources … approaching" warning is one). */
function resourceLimitMessages(synthesized: SynthesizedStack): string[] {
  return synthesized.assembly.stacksRecursively.flatMap((artifact) =>
    artifact.messages.map((message) => String(message.entry.data)).filter((text) => /number of resources/i.test(text)),
  );
}

describe("Resource headroom: every template stays below 60 % of CloudFormation's 500 resources", { timeout: 240_000 }, () => {
  const outdirs: string[] = [];
  const synthesizeInto = (options: Parameters<typeof synthesize>[1] = {}) => {
    const outdir = mkdtempSync(join(tmpdir(), "cdk-headroom-"));
    outdirs.push(outdir);
    return synthesize(outdir, options);
  };
  let product: SynthesizedStack;
  beforeAll(() => {
    product = synthesizeInto();
  });
  afterAll(() => {
    for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
  });

  it("holds today's route table with every template (root and nested) at most 300 resources", () => {
    printCounts(`${routes.length} routes`, product);
    expect(product.templates.length).toBeGreaterThan(1);
    for (const { name, resourceCount } of product.templates) expect(resourceCount, name).toBeLessThanOrEqual(headroomLimit);
    expect(resourceLimitMessages(product)).toEqual([]);
  });

  it("would notice CDK's resource-count warning (checked by lowering the limit CDK warns against)", () => {
    // A limit the root template sits just under (about 90 % of it), so CDK warns instead of failing.
    const limit = Math.ceil((product.templates[0]?.resourceCount ?? 0) * 1.1);
    const lowered = synthesizeInto({ context: { "@aws-cdk/core:stackResourceLimit": limit } });
    expect(resourceLimitMessages(lowered).join("\n")).toMatch(new RegExp(`approaching allowed maximum of ${limit}`));
  });

  it("holds three times today's routes (same handlers, new ids and paths) under the same bound", () => {
    const tripled = tripledRoutes();
    const synthesized = synthesizeInto({ routes: tripled });
    printCounts(`${tripled.length} routes`, synthesized);
    const functions = synthesized.all.findResources("AWS::Lambda::Function");
    // Besides one function per route: the scheduler tick, the routing-run worker, the legacy-import worker, the tenant authorizer, the webhook publisher and delivery worker, and the CloudWatch-role custom resource.
    expect(Object.keys(functions).length).toBe(tripled.length + 7);
    for (const { name, resourceCount } of synthesized.templates) expect(resourceCount, name).toBeLessThanOrEqual(headroomLimit);
    expect(resourceLimitMessages(synthesized)).toEqual([]);
  });
});
