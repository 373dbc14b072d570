import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createRequire } from "node:module";
import { App } from "aws-cdk-lib";
import { Match, type Template } from "aws-cdk-lib/assertions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import { buildApp } from "#infra/app";
import { repositoryRoot } from "#infra/repository-root";
import { runQueueDefinition, runWorkerTimeoutSeconds } from "#shared/queue/definitions";
import { functionActions, synthesize, type SynthesizedStack } from "./synthesize.ts";
import { plans } from "#shared/domain/tenants/plans";

describe("Stack: FieldOperations", () => {
  let outdir: string;
  // Every resource of the root and nested templates; `root` is the root stack's template alone.
  let template: Template;
  let root: Template;
  let assemblyDirectory: string;
  let synthesized: SynthesizedStack;

  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), "cdk-out-"));
    synthesized = synthesize(outdir);
    template = synthesized.all;
    root = synthesized.templates[0]!.template;
    assemblyDirectory = synthesized.assembly.directory;
  });
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it("creates one function per route plus the tick, the run worker, the legacy-import worker, the tenant authorizer and the webhook publisher and delivery worker, and the CloudWatch-role custom resource, all nodejs24.x on ARM64", () => {
    const functions = template.findResources("AWS::Lambda::Function", { Properties: { Runtime: "nodejs24.x" } });
    expect(Object.keys(functions)).toHaveLength(routes.length + 7);
    for (const fn of Object.values(functions)) {
      expect(fn.Properties.Architectures).toEqual(["arm64"]);
      expect(fn.Properties.Handler).toBe("index.handler");
      expect(fn.Properties.LoggingConfig?.LogGroup).toBeDefined();
    }
  });

  it("gives every function a log group with a retention period", () => {
    for (const group of Object.values(template.findResources("AWS::Logs::LogGroup"))) {
      expect(group.Properties.RetentionInDays).toBeGreaterThan(0);
    }
  });

  it("exposes one REST method per route on the v3 stage, with multipart/form-data as a binary media type", () => {
    root.hasResourceProperties("AWS::ApiGateway::RestApi", { BinaryMediaTypes: ["multipart/form-data"] });
    root.hasResourceProperties("AWS::ApiGateway::Stage", {
      StageName: "v3",
      // The stage admits the fastest product plan (enterprise); each tenant's own limit is its usage plan's.
      MethodSettings: Match.arrayWith([
        Match.objectLike({
          ThrottlingRateLimit: Math.max(100, ...plans.map((plan) => plan.rate)),
          ThrottlingBurstLimit: Math.max(200, ...plans.map((plan) => plan.burst)),
        }),
      ]),
    });
    const methods = Object.values(template.findResources("AWS::ApiGateway::Method")).filter((m) => m.Properties.HttpMethod !== "OPTIONS");
    expect(methods).toHaveLength(routes.length);
    for (const method of methods) expect(method.Properties.Integration.Type).toBe("AWS_PROXY");
  });

  it("lets API Gateway invoke each route's function only for that route's method and path on the v3 stage", () => {
    const permissions = Object.values(
      template.findResources("AWS::Lambda::Permission", { Properties: { Principal: "apigateway.amazonaws.com" } }),
    );
    // One per route, plus API Gateway's permission to call the tenant authorizer.
    expect(permissions).toHaveLength(routes.length + 1);
    const sourceArns = permissions.map((permission) => JSON.stringify(permission.Properties.SourceArn));
    for (const route of routes) {
      const arnPath = `/v3/${route.method}${route.path.replace(/\{[^}]+\}/g, "*")}`;
      expect(
        sourceArns.filter((arn) => arn.includes(`${arnPath}"`)),
        arnPath,
      ).toHaveLength(1);
    }
  });

  it("deploys the stage again whenever the route table changes (the methods live in nested stacks)", () => {
    const deploymentId = (routeTable: typeof routes) => {
      const directory = mkdtempSync(join(tmpdir(), "cdk-out-"));
      try {
        const { templates } = synthesize(directory, { routes: routeTable });
        return Object.keys(templates[0]!.template.findResources("AWS::ApiGateway::Deployment"))[0];
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
    };
    const current = Object.keys(root.findResources("AWS::ApiGateway::Deployment"))[0];
    expect(deploymentId(routes.slice(1))).not.toBe(current);
    root.hasResourceProperties("AWS::ApiGateway::Stage", { DeploymentId: { Ref: current } });
  });

  it("keeps the table: on-demand, point-in-time recovery, deletion protection, retained, keys from the shared definition", () => {
    template.hasResource("AWS::DynamoDB::GlobalTable", {
      DeletionPolicy: "Retain",
      Properties: Match.objectLike({
        BillingMode: "PAY_PER_REQUEST",
        KeySchema: [
          { AttributeName: "PK", KeyType: "HASH" },
          { AttributeName: "SK", KeyType: "RANGE" },
        ],
        GlobalSecondaryIndexes: Match.arrayWith([Match.objectLike({ IndexName: "GSI1" }), Match.objectLike({ IndexName: "GSI2" })]),
        TimeToLiveSpecification: { AttributeName: "expiresAt", Enabled: true },
        Replicas: [
          Match.objectLike({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true }, DeletionProtectionEnabled: true }),
        ],
      }),
    });
  });

  it("keeps certificates in a private, encrypted, versioned, TLS-only, retained bucket", () => {
    const buckets = root.findResources("AWS::S3::Bucket", { Properties: { VersioningConfiguration: { Status: "Enabled" } } });
    const [logicalId, bucket] = Object.entries(buckets)[0] ?? [];
    expect(bucket?.DeletionPolicy).toBe("Retain");
    expect(bucket?.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket?.Properties.BucketEncryption).toBeDefined();
    root.hasResourceProperties("AWS::S3::BucketPolicy", {
      Bucket: { Ref: logicalId },
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } })]),
      },
    });
  });

  it("ticks every minute and fans out through SQS (with a DLQ) to the run worker, reporting partial batch failures", () => {
    template.hasResourceProperties("AWS::Events::Rule", { ScheduleExpression: "rate(1 minute)" });
    template.hasResourceProperties("AWS::SQS::Queue", {
      VisibilityTimeout: runQueueDefinition.visibilityTimeoutSeconds,
      RedrivePolicy: Match.objectLike({ maxReceiveCount: runQueueDefinition.maxReceiveCount }),
    });
    expect(runQueueDefinition.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * runWorkerTimeoutSeconds);
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", { FunctionResponseTypes: ["ReportBatchItemFailures"] });
    template.hasResourceProperties("AWS::Lambda::Function", { Timeout: runWorkerTimeoutSeconds });
  });

  it("grants read-only routes no write access to the table", () => {
    const readOnly = routes.filter((route) => route.grants?.includes("tableRead") && !route.grants.includes("tableWrite"));
    expect(readOnly.length).toBeGreaterThan(0);
    for (const route of readOnly) {
      const actions = JSON.stringify(functionActions(synthesized, `${route.operationId}Function`));
      expect(actions, route.operationId).toContain("dynamodb:Query");
      expect(actions, route.operationId).not.toContain("dynamodb:PutItem");
    }
  });

  it("passes cdk-nag AwsSolutions with every finding acknowledged with a reason", () => {
    const report = JSON.parse(readFileSync(join(assemblyDirectory, "validation-report.json"), "utf8"));
    const awsSolutions = report.pluginReports.find((r: { pluginName: string }) => r.pluginName === "AwsSolutions");
    expect(awsSolutions.violations).toEqual([]);
    expect(awsSolutions.conclusion).toBe("success");
    for (const suppressed of awsSolutions.suppressedViolations) expect(suppressed.reason.length).toBeGreaterThan(20);
  });

  it("points every route at a module that exports a handler function", async () => {
    for (const route of routes) {
      expect(existsSync(resolve(repositoryRoot, route.handler)), route.handler).toBe(true);
      const module = await import(resolve(repositoryRoot, route.handler));
      expect(typeof module.handler, route.handler).toBe("function");
    }
  });

  // A hang guard, not a speed check (bench:cold measures bundles): the bundled synth took 14–31 s on the
  // shared 2-core machine at a load of 4–9 and scales with the load, so 180 s was too close at a load of 30+.
  it("bundles every function with the local esbuild into a CommonJS file that exports handler", () => {
    const bundleOut = mkdtempSync(join(tmpdir(), "cdk-bundle-"));
    const loadDirectory = mkdtempSync(join(tmpdir(), "bundle-"));
    try {
      buildApp(new App({ outdir: bundleOut })).app.synth();
      const bundles = readdirSync(bundleOut).filter((entry) => existsSync(join(bundleOut, entry, "index.js")));
      expect(bundles).toHaveLength(routes.length + 7);
      const requireBundle = createRequire(import.meta.url);
      for (const bundle of bundles) {
        // Loaded outside the repository (no "type": "module" above it), as the Lambda runtime loads it.
        const copy = join(loadDirectory, `${bundle}.cjs`);
        writeFileSync(copy, readFileSync(join(bundleOut, bundle, "index.js")));
        expect(typeof requireBundle(copy).handler, bundle).toBe("function");
      }
    } finally {
      rmSync(bundleOut, { recursive: true, force: true });
      rmSync(loadDirectory, { recursive: true, force: true });
    }
  }, 600_000);
});
