import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CfnAuthorizer } from "aws-cdk-lib/aws-apigateway";
import { ResponseType } from "aws-cdk-lib/aws-apigateway";
import { Match } from "aws-cdk-lib/assertions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
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
import { featureFlags, productTemplates, synthesize, type SynthesizedTemplates } from "./synthesize.ts";

const outdirs: string[] = [];
const synthesizeIn = (options: Parameters<typeof synthesize>[1] = {}) => {
  const outdir = mkdtempSync(join(tmpdir(), "cdk-ops-"));
  outdirs.push(outdir);
  return synthesize(outdir, options);
};
afterAll(() => {
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});

const rootOf = (synthesized: SynthesizedTemplates) => synthesized.templates[0]!.template;
const deploymentIdOf = (synthesized: SynthesizedTemplates) =>
  Object.keys(rootOf(synthesized).findResources("AWS::ApiGateway::Deployment"))[0];

describe("Operations on the stack", { timeout: 300_000 }, () => {
  let base: SynthesizedTemplates;
  beforeAll(async () => {
    base = await productTemplates();
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
    const ids = (synthesized: SynthesizedTemplates) => kinds.flatMap((kind) => Object.keys(rootOf(synthesized).findResources(kind))).sort();
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

  describe("token issuers: baked into the template (no parameters a later deploy would reuse), placeholders refused at deploy time", () => {
    /** CloudFormation's rule functions over the template's literals (the stack declares no parameters for them). */
    const holds = (condition: unknown): boolean => {
      const value = (term: unknown): unknown => (typeof term === "object" && term !== null ? holds(term) : term);
      const [name, args] = Object.entries(condition as Record<string, unknown[]>)[0]!;
      if (name === "Fn::Not") return !holds(args[0]);
      if (name === "Fn::Equals") return value(args[0]) === value(args[1]);
      throw new Error(`rule function ${name} not modelled`);
    };
    const failingAssertions = (synthesized: SynthesizedTemplates) => {
      const rules = rootOf(synthesized).toJSON().Rules as Record<
        string,
        { Assertions: Array<{ Assert: unknown; AssertDescription: string }> }
      >;
      // Only this stack's rule (CDK adds its own over the bootstrap version).
      return [rules.JwtSettingsAreReal!].flatMap((rule) =>
        rule.Assertions.filter((assertion) => !holds(assertion.Assert)).map((assertion) => assertion.AssertDescription),
      );
    };
    const functions = (synthesized: SynthesizedTemplates) =>
      synthesized.templates.flatMap(({ template }) => Object.values(template.findResources("AWS::Lambda::Function")));
    const acceptedIssuers = (synthesized: SynthesizedTemplates) => {
      const authorizer = functions(synthesized).find((fn) => fn.Properties.Environment?.Variables?.TENANT_AUTO_ENROLL !== undefined);
      return JSON.parse(authorizer?.Properties.Environment.Variables.JWT_ISSUERS_JSON) as unknown;
    };
    const cognito = {
      issuer: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc",
      audience: "client-123",
      jwksUri: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc/.well-known/jwks.json",
    };

    it("the default context (cdk.json's placeholders) synthesizes, and its rule fails before any resource is created", () => {
      const failing = failingAssertions(base);
      expect(failing).toHaveLength(2);
      expect(failing.join(" ")).toContain("jwtIssuer");
      expect(failing.join(" ")).toContain("jwtJwksUri");
      expect(Object.keys(rootOf(base).toJSON().Parameters ?? {}).filter((name) => /jwt/i.test(name))).toEqual([]);
    });

    it("real settings pass the rule; only the authorizer holds them, as its list of issuers", () => {
      const real = synthesizeIn({ context: { jwtIssuer: cognito.issuer, jwtJwksUri: cognito.jwksUri, jwtAudience: cognito.audience } });
      expect(failingAssertions(real)).toEqual([]);
      expect(acceptedIssuers(real)).toEqual([cognito]);
      const holdingJwtSettings = functions(real).filter((fn) =>
        Object.keys(fn.Properties.Environment?.Variables ?? {}).some((name) => name.startsWith("JWT_")),
      );
      expect(holdingJwtSettings).toHaveLength(1);
    });

    it("rotation: a jwtIssuersFile lists old and new issuers, each checked; a changed list changes the template itself", () => {
      const directory = mkdtempSync(join(tmpdir(), "jwt-issuers-"));
      outdirs.push(directory);
      const next = { issuer: "https://login.example.org/tenant-b", audience: "api-b", jwksUri: "https://login.example.org/tenant-b/keys" };
      const file = join(directory, "issuers.json");
      writeFileSync(file, JSON.stringify([cognito, next]));
      const both = synthesizeIn({ context: { jwtIssuersFile: file } });
      expect(acceptedIssuers(both)).toEqual([cognito, next]);
      expect(failingAssertions(both)).toEqual([]);

      writeFileSync(file, JSON.stringify([cognito, { ...next, jwksUri: "https://issuer.example.com/.well-known/jwks.json" }]));
      expect(failingAssertions(synthesizeIn({ context: { jwtIssuersFile: file } }))).toEqual([expect.stringContaining("jwtJwksUri")]);
      writeFileSync(file, JSON.stringify([cognito, cognito]));
      expect(() => synthesizeIn({ context: { jwtIssuersFile: file } })).toThrow(/each issuer may be listed once/);
      writeFileSync(file, JSON.stringify([{ ...next, jwksUri: "http://login.example.org/keys" }]));
      expect(() => synthesizeIn({ context: { jwtIssuersFile: file } })).toThrow(/jwksUri must be https/);
      writeFileSync(file, JSON.stringify([]));
      expect(() => synthesizeIn({ context: { jwtIssuersFile: file } })).toThrow(/list at least one issuer/);
    });
  });

  it("a second stack in the account keeps its own API name and metric namespace: functions, the metric filter, alarms and the dashboard", () => {
    const staging = synthesizeIn({ context: { stackName: "Staging" } });
    const resourcesOf = (type: string) =>
      staging.templates.flatMap(({ template }) => Object.values(template.findResources(type) as Record<string, { Properties: any }>));
    const namespaces = resourcesOf("AWS::Lambda::Function").map((fn) => fn.Properties.Environment?.Variables?.POWERTOOLS_METRICS_NAMESPACE);
    expect(new Set(namespaces.filter((namespace) => namespace !== undefined))).toEqual(new Set(["Staging"]));
    const filters = resourcesOf("AWS::Logs::MetricFilter").map((filter) => filter.Properties.MetricTransformations[0].MetricNamespace);
    expect(new Set(filters)).toEqual(new Set(["Staging"]));
    const ownAlarms = resourcesOf("AWS::CloudWatch::Alarm").filter((alarm) => !JSON.stringify(alarm.Properties).includes("AWS/"));
    expect(ownAlarms.length).toBeGreaterThan(0);
    for (const alarm of ownAlarms) expect(JSON.stringify(alarm.Properties)).not.toContain("FieldOperations");
    const dashboard = JSON.stringify(resourcesOf("AWS::CloudWatch::Dashboard").map((each) => each.Properties.DashboardBody));
    expect(dashboard).toContain('\\"Staging\\"');
    expect(dashboard).not.toContain('\\"FieldOperations\\"');
    expect(resourcesOf("AWS::ApiGateway::RestApi")[0]?.Properties.Name).toBe("Staging-api");
  });

  it("a route added under another area's path changes no logical id outside its own area's stack", () => {
    const history = routes.find((route) => route.operationId === "listVisitHistory")!;
    const grown = synthesizeIn({
      routes: [
        ...routes,
        { ...history, operationId: "listVehicleVisitHistory", path: "/vehicle/{vehicleId}/visit-history" },
        { ...history, operationId: "listHubVisitHistory", path: "/hub/{hubId}/visit-history" },
      ],
    });
    const idsOf = (synthesized: SynthesizedTemplates) =>
      new Map(
        synthesized.templates.map(({ name, template }) => [
          name,
          // The deployment is new by design (its id hashes what it snapshots).
          Object.keys(template.toJSON().Resources).filter((id) => !/^Deployment[0-9A-F]{8}/.test(id)),
        ]),
      );
    const before = idsOf(base);
    const after = idsOf(grown);
    for (const [name, ids] of before) {
      // Its own area keeps its resources; only its alarms (one per group of functions) may be renamed as it grows.
      if (name.endsWith("/VisitsApi")) expect(after.get(name)).toEqual(expect.arrayContaining(ids.filter((id) => !/Alarm/.test(id))));
      else expect(after.get(name), name).toEqual(ids);
    }
    expect(after.get("FieldOperations/VisitsApi")!.length).toBeGreaterThan(before.get("FieldOperations/VisitsApi")!.length);
  });

  it("associates an operator's WAF web ACL with the stage when webAclArn is given, and none otherwise", () => {
    const webAclArn = "arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/field-ops/0f1e2d3c-aaaa-bbbb-cccc-123456789012";
    expect(Object.keys(rootOf(base).findResources("AWS::WAFv2::WebACLAssociation"))).toEqual([]);
    const guarded = synthesizeIn({ context: { webAclArn } });
    const associations = Object.values(rootOf(guarded).findResources("AWS::WAFv2::WebACLAssociation"));
    expect(associations).toHaveLength(1);
    expect(associations[0]!.Properties.WebACLArn).toBe(webAclArn);
    expect(JSON.stringify(associations[0]!.Properties.ResourceArn)).toContain("/stages/");
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
    const bucketWithRules = (synthesized: SynthesizedTemplates) =>
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
