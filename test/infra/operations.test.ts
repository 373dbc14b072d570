import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CfnAuthorizer } from "aws-cdk-lib/aws-apigateway";
import { ResponseType } from "aws-cdk-lib/aws-apigateway";
import { Match } from "aws-cdk-lib/assertions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { placeholderJwt } from "#infra/placeholders";
import { publicRouteThrottle, webhookOldestMessageAlarmSeconds } from "#infra/stacks/field-operations-stack";
import { tenantSlotCap } from "#shared/domain/fairness/worker-slots";
import {
  deadLetterOldestMessageAlarmSeconds,
  defaultRunWorkerMaxConcurrency,
  duePageQueueDefinition,
  importQueueDefinition,
  runQueueDefinition,
  runSpilloverQueueDefinition,
} from "#shared/queue/definitions";
import { featureFlags, synthesize, type SynthesizedStack } from "./synthesize.ts";

const outdirs: string[] = [];
const synthesizeIn = (options: Parameters<typeof synthesize>[1] = {}) => {
  const outdir = mkdtempSync(join(tmpdir(), "cdk-ops-"));
  outdirs.push(outdir);
  return synthesize(outdir, options);
};
afterAll(() => {
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});

const rootOf = (synthesized: SynthesizedStack) => synthesized.templates[0]!.template;
const deploymentIdOf = (synthesized: SynthesizedStack) => Object.keys(rootOf(synthesized).findResources("AWS::ApiGateway::Deployment"))[0];

describe("Operations on the stack", { timeout: 300_000 }, () => {
  let base: SynthesizedStack;
  beforeAll(() => {
    base = synthesizeIn();
  });

  describe("a new deployment exactly when something a deployment snapshots changes", () => {
    it("the same input synthesizes the same deployment", () => {
      expect(deploymentIdOf(synthesizeIn())).toBe(deploymentIdOf(base));
    });

    it("the authorizer's cache TTL", () => {
      expect(deploymentIdOf(synthesizeIn({ context: { authorizerCacheTtlSeconds: 60 } }))).not.toBe(deploymentIdOf(base));
    });

    it("the authorizer's identity source", () => {
      const changed = synthesizeIn({
        beforeSynth: (stack) => {
          (stack.authorizer.node.defaultChild as CfnAuthorizer).identitySource =
            "method.request.header.Authorization,method.request.header.X-Tenant";
        },
      });
      expect(deploymentIdOf(changed)).not.toBe(deploymentIdOf(base));
    });

    it("a gateway response", () => {
      const changed = synthesizeIn({
        beforeSynth: (stack) => stack.api.addGatewayResponse("Expired", { type: ResponseType.EXPIRED_TOKEN, statusCode: "401" }),
      });
      expect(deploymentIdOf(changed)).not.toBe(deploymentIdOf(base));
    });

    it("the CORS preflight's origins (the OPTIONS methods and the gateway responses' headers)", () => {
      expect(deploymentIdOf(synthesizeIn({ context: { corsAllowedOrigins: "https://app.example.com" } }))).not.toBe(deploymentIdOf(base));
    });

    it("not a stage setting (throttles update the stage in place) nor a function's memory", () => {
      const changed = synthesizeIn({ context: { runWorkerMemoryMb: 1024, alarmEmail: "ops@example.com" } });
      expect(deploymentIdOf(changed)).toBe(deploymentIdOf(base));
    });
  });

  it("the recommended feature flags change the logical id of no table, bucket or queue", () => {
    const before = synthesizeIn({ flags: {} });
    const kinds = ["AWS::DynamoDB::GlobalTable", "AWS::S3::Bucket", "AWS::SQS::Queue"];
    const ids = (synthesized: SynthesizedStack) => kinds.flatMap((kind) => Object.keys(rootOf(synthesized).findResources(kind))).sort();
    expect(Object.keys(featureFlags).length).toBeGreaterThan(50);
    expect(ids(before).length).toBeGreaterThanOrEqual(7);
    expect(ids(base)).toEqual(ids(before));
  });

  it("alarms on the oldest message of the run, spillover, due-page, import and webhook queues and their three dead-letter queues", () => {
    const ageAlarms = Object.values(
      rootOf(base).findResources("AWS::CloudWatch::Alarm", { Properties: { MetricName: "ApproximateAgeOfOldestMessage" } }),
    );
    const thresholds = ageAlarms.map((alarm) => alarm.Properties.Threshold).sort((a, b) => a - b);
    expect(thresholds).toEqual(
      [
        duePageQueueDefinition.oldestMessageAlarmSeconds,
        runQueueDefinition.oldestMessageAlarmSeconds,
        runSpilloverQueueDefinition.oldestMessageAlarmSeconds,
        importQueueDefinition.oldestMessageAlarmSeconds,
        webhookOldestMessageAlarmSeconds,
        // The run (and due-page), import and webhook dead-letter queues.
        deadLetterOldestMessageAlarmSeconds,
        deadLetterOldestMessageAlarmSeconds,
        deadLetterOldestMessageAlarmSeconds,
      ].sort((a, b) => a - b),
    );
    for (const alarm of ageAlarms) expect(alarm.Properties.AlarmActions).toHaveLength(1);
    // Run messages live SQS's maximum, 14 days; the age alarm fires within the first hour.
    rootOf(base).hasResourceProperties("AWS::SQS::Queue", {
      MessageRetentionPeriod: 14 * 24 * 3600,
      VisibilityTimeout: runQueueDefinition.visibilityTimeoutSeconds,
    });
    expect(runQueueDefinition.messageRetentionSeconds).toBe(14 * 24 * 3600);
    expect(runQueueDefinition.oldestMessageAlarmSeconds * 3).toBeLessThan(3600);
  });

  it("alarms when the tick stops running: no invocations is breaching", () => {
    rootOf(base).hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "Invocations",
      Namespace: "AWS/Lambda",
      ComparisonOperator: "LessThanThreshold",
      Threshold: 1,
      TreatMissingData: "breaching",
    });
  });

  it("reads fan-out pages from their own queue with their own concurrency", () => {
    // Run queue, run spillover, due pages, import queue, webhook deliveries, the table's stream (webhook publisher).
    const mappings = Object.values(rootOf(base).findResources("AWS::Lambda::EventSourceMapping"));
    expect(mappings).toHaveLength(6);
    expect(mappings.map((mapping) => mapping.Properties.ScalingConfig?.MaximumConcurrency).sort()).toContain(
      duePageQueueDefinition.maxConcurrency,
    );
  });

  it("keeps the runs beyond an organization's share in a spillover queue: 14 days, the run dead-letter queue after 3 deliveries, read by one share of workers", () => {
    const queues = rootOf(base).findResources("AWS::SQS::Queue");
    const [spilloverId, spillover] = Object.entries(queues).find(([id]) => id.startsWith("RunSpilloverQueue")) ?? [];
    expect(spillover?.Properties).toMatchObject({
      MessageRetentionPeriod: 14 * 24 * 3600,
      VisibilityTimeout: runSpilloverQueueDefinition.visibilityTimeoutSeconds,
      RedrivePolicy: { maxReceiveCount: 3, deadLetterTargetArn: { "Fn::GetAtt": [expect.stringMatching(/^RunDeadLetterQueue/), "Arn"] } },
    });
    const mappings = Object.values(rootOf(base).findResources("AWS::Lambda::EventSourceMapping"));
    const onSpillover = mappings.filter((mapping) => JSON.stringify(mapping.Properties.EventSourceArn).includes(spilloverId as string));
    expect(onSpillover.map((mapping) => mapping.Properties.ScalingConfig)).toEqual([
      { MaximumConcurrency: tenantSlotCap(defaultRunWorkerMaxConcurrency) },
    ]);
  });

  it("creates no account-wide API Gateway setting by default, and the execution-log group with a retention period", () => {
    rootOf(base).resourceCountIs("AWS::ApiGateway::Account", 0);
    rootOf(base).hasResourceProperties("AWS::Logs::LogGroup", {
      LogGroupName: Match.objectLike({ "Fn::Join": Match.arrayWith([Match.arrayWith(["API-Gateway-Execution-Logs_"])]) }),
      RetentionInDays: 30,
    });
    rootOf(base).hasResourceProperties("AWS::ApiGateway::Stage", {
      MethodSettings: Match.arrayWith([Match.objectLike({ HttpMethod: "*", LoggingLevel: "OFF" })]),
    });
    const optedIn = synthesizeIn({ context: { apiGatewayAccountRole: "true" } });
    rootOf(optedIn).resourceCountIs("AWS::ApiGateway::Account", 1);
    rootOf(optedIn).hasResource("AWS::ApiGateway::Account", { DeletionPolicy: "Retain" });
    rootOf(optedIn).hasResourceProperties("AWS::ApiGateway::Stage", {
      MethodSettings: Match.arrayWith([Match.objectLike({ HttpMethod: "*", LoggingLevel: "ERROR" })]),
    });
  });

  describe("refuses the placeholder JWT settings at deploy time, not at synth", () => {
    /** CloudFormation's rule functions, evaluated over the parameters' values (their defaults unless given). */
    const holds = (condition: unknown, parameters: Record<string, string>): boolean => {
      const value = (term: unknown): unknown => {
        if (typeof term === "object" && term !== null && "Ref" in term) return parameters[(term as { Ref: string }).Ref];
        if (typeof term === "object" && term !== null) return holds(term, parameters);
        return term;
      };
      const [name, args] = Object.entries(condition as Record<string, unknown[]>)[0]!;
      if (name === "Fn::Not") return !holds(args[0], parameters);
      if (name === "Fn::Equals") return value(args[0]) === value(args[1]);
      throw new Error(`rule function ${name} not modelled`);
    };
    const parameterDefaults = (synthesized: SynthesizedStack) =>
      Object.fromEntries(
        Object.entries(rootOf(synthesized).toJSON().Parameters as Record<string, { Default?: string }>).map(([name, parameter]) => [
          name,
          parameter.Default ?? "",
        ]),
      );
    const failingAssertions = (synthesized: SynthesizedStack, parameters: Record<string, string>) => {
      const rules = rootOf(synthesized).toJSON().Rules as Record<
        string,
        { Assertions: Array<{ Assert: unknown; AssertDescription: string }> }
      >;
      // Only this stack's rule (CDK adds its own over the bootstrap version).
      return [rules.JwtSettingsAreReal!].flatMap((rule) =>
        rule.Assertions.filter((assertion) => !holds(assertion.Assert, parameters)).map((assertion) => assertion.AssertDescription),
      );
    };

    it("the default context (cdk.json's placeholders) synthesizes, and its rule fails before any resource is created", () => {
      const parameters = parameterDefaults(base);
      expect(Object.values(parameters)).toEqual(expect.arrayContaining([placeholderJwt.issuer, placeholderJwt.jwksUri]));
      const failing = failingAssertions(base, parameters);
      expect(failing).toHaveLength(2);
      expect(failing.join(" ")).toContain("jwtIssuer");
      expect(failing.join(" ")).toContain("jwtJwksUri");
    });

    it("real settings pass the rule, and every function reads them from the parameters", () => {
      const real = synthesizeIn({
        context: {
          jwtIssuer: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc",
          jwtJwksUri: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc/.well-known/jwks.json",
          jwtAudience: "client-123",
        },
      });
      expect(failingAssertions(real, parameterDefaults(real))).toEqual([]);
      const authorizer = Object.values(rootOf(real).findResources("AWS::Lambda::Function")).find(
        (fn) => fn.Properties.Environment.Variables.TENANT_AUTO_ENROLL !== undefined,
      );
      expect(authorizer?.Properties.Environment.Variables.JWT_ISSUER).toEqual({ Ref: "JwtIssuer" });
    });
  });

  it("throttles each public route on its own, below the stage limit", () => {
    const stage = Object.values(rootOf(base).findResources("AWS::ApiGateway::Stage"))[0]!;
    const settings = stage.Properties.MethodSettings as Array<{
      ResourcePath: string;
      HttpMethod: string;
      ThrottlingRateLimit: number;
      ThrottlingBurstLimit: number;
    }>;
    const stageLimit = settings.find((setting) => setting.HttpMethod === "*")!;
    const publicRoutes = settings.filter((setting) => setting.HttpMethod === "GET");
    expect(publicRoutes.map((setting) => setting.ResourcePath).sort()).toEqual(["/~1docs", "/~1openapi.json"]);
    for (const setting of publicRoutes) {
      expect(setting).toMatchObject({
        ThrottlingRateLimit: publicRouteThrottle.rateLimit,
        ThrottlingBurstLimit: publicRouteThrottle.burstLimit,
      });
      expect(setting.ThrottlingRateLimit).toBeLessThan(stageLimit.ThrottlingRateLimit);
    }
  });

  it("logs JSON at the context's level, access logs name the tenant, key, integration latency and error, 429s carry Retry-After, and every gateway answer nosniff", () => {
    for (const fn of Object.values(base.all.findResources("AWS::Lambda::Function", { Properties: { Runtime: "nodejs24.x" } }))) {
      expect(fn.Properties.LoggingConfig).toMatchObject({ LogFormat: "JSON", ApplicationLogLevel: "INFO", SystemLogLevel: "WARN" });
    }
    const debug = synthesizeIn({ context: { logLevel: "debug" } });
    expect(
      Object.values(rootOf(debug).findResources("AWS::Lambda::Function", { Properties: { Runtime: "nodejs24.x" } }))[0]!.Properties
        .LoggingConfig.ApplicationLogLevel,
    ).toBe("DEBUG");
    const stage = Object.values(rootOf(base).findResources("AWS::ApiGateway::Stage"))[0]!;
    const format = JSON.parse(stage.Properties.AccessLogSetting.Format);
    expect(format).toMatchObject({
      organizationId: "$context.authorizer.organizationId",
      apiKeyId: "$context.identity.apiKeyId",
      integrationLatency: "$context.integration.latency",
      error: "$context.error.message",
    });
    const responses = Object.values(rootOf(base).findResources("AWS::ApiGateway::GatewayResponse"));
    for (const response of responses)
      expect(response.Properties.ResponseParameters["gatewayresponse.header.X-Content-Type-Options"]).toBe("'nosniff'");
    const tooMany = responses.filter((response) => response.Properties.StatusCode === "429");
    expect(tooMany).toHaveLength(2);
    for (const response of tooMany) expect(response.Properties.ResponseParameters["gatewayresponse.header.Retry-After"]).toMatch(/^'\d+'$/);
  });

  it("ends what the file bucket stores: uploads expire, old versions expire, unfinished multipart uploads abort; periods by context", () => {
    const bucketWithRules = (synthesized: SynthesizedStack) =>
      Object.values(rootOf(synthesized).findResources("AWS::S3::Bucket")).find((bucket) => bucket.Properties.VersioningConfiguration)!
        .Properties.LifecycleConfiguration.Rules as Array<Record<string, unknown>>;
    const rules = bucketWithRules(base);
    expect(rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: "Enabled" }),
        expect.objectContaining({ NoncurrentVersionExpiration: { NoncurrentDays: 30 }, Status: "Enabled" }),
        expect.objectContaining({ Prefix: "imports/", ExpirationInDays: 7, Status: "Enabled" }),
      ]),
    );
    expect(rules.some((rule) => rule.Prefix === "results/")).toBe(false);
    const configured = bucketWithRules(
      synthesizeIn({ context: { importRetentionDays: 2, noncurrentVersionDays: 10, resultRetentionDays: 400 } }),
    );
    expect(configured).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ NoncurrentVersionExpiration: { NoncurrentDays: 10 } }),
        expect.objectContaining({ Prefix: "imports/", ExpirationInDays: 2 }),
        expect.objectContaining({ Prefix: "results/", ExpirationInDays: 400 }),
      ]),
    );
  });

  it("has one operations dashboard over the API, the areas, the queues, the tick, the runs and the imports", () => {
    const dashboards = Object.values(rootOf(base).findResources("AWS::CloudWatch::Dashboard"));
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(
      rootOf(base).toJSON().Resources[Object.keys(rootOf(base).findResources("AWS::CloudWatch::Dashboard"))[0]!].Properties.DashboardBody,
    );
    for (const metric of [
      "ApproximateAgeOfOldestMessage",
      "5XXError",
      "Latency",
      "TickEnqueued",
      "RunDone",
      "OptimizerSeconds",
      "ImportStepFinished",
    ])
      expect(body).toContain(metric);
  });
});
