import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App, NestedStack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "#infra/app";
import { defaultRunWorkerMaxConcurrency, runWorkerMemoryMb } from "#shared/queue/definitions";

/** Synthesizes without bundling (fast). */
const outdirs: string[] = [];
/** The API functions live in one nested stack per area: their templates, beside the root's. */
const nestedTemplates = new Map<Template, Template[]>();
function synthesize(context: Record<string, unknown> = {}): Template {
  const outdir = mkdtempSync(join(tmpdir(), "cdk-out-concurrency-"));
  outdirs.push(outdir);
  const { app, stack } = buildApp(new App({ outdir, context: { "aws:cdk:bundling-stacks": [], ...context } }));
  app.synth();
  const root = Template.fromStack(stack);
  nestedTemplates.set(
    root,
    stack.node
      .findAll()
      .filter((construct): construct is NestedStack => construct instanceof NestedStack)
      .map((nested) => Template.fromStack(nested)),
  );
  return root;
}
const everyFunction = (root: Template) =>
  [root, ...(nestedTemplates.get(root) ?? [])].flatMap((template) => Object.values(template.findResources("AWS::Lambda::Function")));

afterAll(() => {
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});

/** The routing-run worker's mapping on the run queue (the spillover, the legacy-import worker, the due pages, the webhook publisher and the delivery worker have their own). */
const workerMapping = (template: Template) => {
  const mappings = Object.values(template.findResources("AWS::Lambda::EventSourceMapping"));
  expect(mappings).toHaveLength(6);
  const onRunQueue = mappings.filter((mapping) => JSON.stringify(mapping.Properties.EventSourceArn).includes("RunQueue"));
  expect(onRunQueue).toHaveLength(1);
  return onRunQueue[0]?.Properties as { ScalingConfig?: { MaximumConcurrency?: number }; BatchSize?: number };
};

describe("Stack: bounded run concurrency", () => {
  let defaults: Template;
  let configured: Template;

  // Two synths (with cdk-nag) take a while on a busy machine.
  beforeAll(() => {
    defaults = synthesize();
    configured = synthesize({ runWorkerMaxConcurrency: 7, maxActiveRunsPerOrg: 3, runWorkerMemoryMb: 512 });
  }, 600_000);

  it("the run worker's SQS event source has a maximum concurrency, by default 20", () => {
    expect(defaultRunWorkerMaxConcurrency).toBe(20);
    expect(workerMapping(defaults).ScalingConfig).toEqual({ MaximumConcurrency: 20 });
  });

  it("context runWorkerMaxConcurrency sets it, and maxActiveRunsPerOrg reaches every function as MAX_ACTIVE_RUNS_PER_ORG", () => {
    expect(workerMapping(configured).ScalingConfig).toEqual({ MaximumConcurrency: 7 });
    // Every product function but the tenant authorizer, which starts no runs; nor the custom resources' functions
    // (ApiGatewayCloudWatchRole), which run at deployment with an environment of their own.
    const functions = everyFunction(configured).filter((fn) => {
      const description = String(fn.Properties.Description ?? "");
      return !description.startsWith("Tenant authorizer") && !description.startsWith("Custom resource:");
    });
    expect(functions.length).toBeGreaterThan(2);
    for (const fn of functions)
      expect([fn.Properties.Description, fn.Properties.Environment?.Variables?.MAX_ACTIVE_RUNS_PER_ORG]).toEqual([
        fn.Properties.Description,
        "3",
      ]);
  });

  it("the spillover queue's readers are one organization's share, and every run enqueuer knows the share and the spillover queue", () => {
    const spilloverConcurrency = (template: Template) =>
      Object.values(template.findResources("AWS::Lambda::EventSourceMapping"))
        .filter((mapping) => JSON.stringify(mapping.Properties.EventSourceArn).includes("RunSpilloverQueue"))
        .map((mapping) => mapping.Properties.ScalingConfig?.MaximumConcurrency);
    expect(spilloverConcurrency(defaults)).toEqual([19]);
    expect(spilloverConcurrency(configured)).toEqual([6]);
    const byDescription = (prefix: string) =>
      everyFunction(configured).filter((fn) => String(fn.Properties.Description ?? "").startsWith(prefix));
    const enqueuers = [
      ...byDescription("Every minute: enqueue"),
      ...everyFunction(configured).filter((fn) => fn.Properties.Description === "POST /v3/routing/result"),
      ...byDescription("Runs one routing"),
    ];
    // The tick, POST /routing/result and the worker (due pages; deferrals).
    expect(enqueuers).toHaveLength(3);
    for (const fn of enqueuers) {
      expect(fn.Properties.Environment?.Variables?.RUN_WORKER_SLOTS_PER_TENANT, String(fn.Properties.Description)).toBe("6");
      expect(JSON.stringify(fn.Properties.Environment?.Variables?.RUN_SPILLOVER_QUEUE_URL), String(fn.Properties.Description)).toMatch(
        /RunSpilloverQueue/,
      );
    }
    // A route that enqueues no run carries neither.
    for (const fn of byDescription("GET /v3/hubs")) expect(fn.Properties.Environment?.Variables?.RUN_SPILLOVER_QUEUE_URL).toBeUndefined();
  });

  it("without the context the functions use the default cap (no MAX_ACTIVE_RUNS_PER_ORG set)", () => {
    const functions = everyFunction(defaults);
    expect(functions.length).toBeGreaterThan(2);
    for (const fn of functions) expect(fn.Properties.Environment?.Variables?.MAX_ACTIVE_RUNS_PER_ORG).toBeUndefined();
  });

  it("the run worker's memory is 1,769 MB (one vCPU) by default and context runWorkerMemoryMb sets it", () => {
    const worker = (template: Template) =>
      Object.entries(template.findResources("AWS::Lambda::Function")).find(([id]) => id.startsWith("RoutingRunFunction"))![1].Properties;
    expect(worker(defaults).MemorySize).toBe(1769);
    expect(worker(configured).MemorySize).toBe(512);
    expect(() => runWorkerMemoryMb(64)).toThrow(/128–10240/);
  });

  it("the run worker may send on the run queue (a fan-out page's runs)", () => {
    const policies = Object.values(defaults.findResources("AWS::IAM::Policy")).filter((policy) =>
      JSON.stringify(policy.Properties.Roles).includes("RoutingRunFunction"),
    );
    expect(JSON.stringify(policies)).toContain("sqs:SendMessage");
  });
});
