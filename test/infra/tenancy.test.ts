import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Match } from "aws-cdk-lib/assertions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import { plans } from "#shared/domain/tenants/plans";
import { productTemplates, synthesize, type SynthesizedStack, type SynthesizedTemplates } from "./synthesize.ts";

/** Tenancy at the gateway: the tenant authorizer, usage plans from the plan config, keys from the authorizer. */
describe("Tenancy in the synthesized stack", { timeout: 240_000 }, () => {
  const operatorPlan = {
    name: "gold",
    description: "An operator's own plan",
    rate: 20,
    burst: 40,
    callQuota: { limit: 300, period: "day" as const },
    maxRunsQueued: 3,
  };
  const outdirs: string[] = [];
  let product: SynthesizedTemplates;
  let customized: SynthesizedStack;
  beforeAll(async () => {
    const outdir = () => {
      const directory = mkdtempSync(join(tmpdir(), "cdk-tenancy-"));
      outdirs.push(directory);
      return directory;
    };
    product = await productTemplates();
    customized = synthesize(outdir(), {
      planOverrides: { plans: [operatorPlan] },
      context: { authorizerCacheTtlSeconds: 60, tenantAutoEnroll: "true" },
    });
  });
  afterAll(() => {
    for (const directory of outdirs) rmSync(directory, { recursive: true, force: true });
  });
  const root = (synthesized: SynthesizedTemplates) => synthesized.templates[0]!.template;

  it("has one REQUEST authorizer on the Authorization header, its results cached 300 s by default (context authorizerCacheTtlSeconds)", () => {
    root(product).resourceCountIs("AWS::ApiGateway::Authorizer", 1);
    root(product).hasResourceProperties("AWS::ApiGateway::Authorizer", {
      Type: "REQUEST",
      IdentitySource: "method.request.header.Authorization",
      AuthorizerResultTtlInSeconds: 300,
    });
    root(customized).hasResourceProperties("AWS::ApiGateway::Authorizer", { AuthorizerResultTtlInSeconds: 60 });
  });

  it("takes API keys from the authorizer", () => {
    root(product).hasResourceProperties("AWS::ApiGateway::RestApi", { ApiKeySourceType: "AUTHORIZER" });
  });

  it("puts every authenticated method behind the authorizer with an API key required; the OpenAPI document stays open", () => {
    const methods = Object.values(product.all.findResources("AWS::ApiGateway::Method")).filter(
      (method) => method.Properties.HttpMethod !== "OPTIONS",
    );
    expect(methods).toHaveLength(routes.length);
    const open = methods.filter((method) => method.Properties.AuthorizationType === "NONE");
    expect(open).toHaveLength(routes.filter((route) => route.auth === "none").length);
    for (const method of methods.filter((each) => each.Properties.AuthorizationType !== "NONE")) {
      expect(method.Properties).toMatchObject({ AuthorizationType: "CUSTOM", ApiKeyRequired: true });
      expect(method.Properties.AuthorizerId).toBeDefined();
    }
  });

  it("builds one usage plan per plan of plans.ts with its rate, burst and quota, on the v3 stage", () => {
    root(product).resourceCountIs("AWS::ApiGateway::UsagePlan", plans.length);
    for (const plan of plans) {
      root(product).hasResourceProperties("AWS::ApiGateway::UsagePlan", {
        UsagePlanName: `FieldOperations-${plan.name}`,
        Throttle: { RateLimit: plan.rate, BurstLimit: plan.burst },
        Quota: "callQuota" in plan ? { Limit: plan.callQuota.limit, Period: plan.callQuota.period.toUpperCase() } : Match.absent(),
        ApiStages: [Match.objectLike({ Stage: Match.anyValue() })],
      });
    }
  });

  it("adds the operator's plans (same config the local runtime reads); no function carries them in an environment variable (they are bundled)", () => {
    root(customized).resourceCountIs("AWS::ApiGateway::UsagePlan", plans.length + 1);
    root(customized).hasResourceProperties("AWS::ApiGateway::UsagePlan", {
      UsagePlanName: "FieldOperations-gold",
      Throttle: { RateLimit: 20, BurstLimit: 40 },
      Quota: { Limit: 300, Period: "DAY" },
    });
    root(customized).hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: Match.objectLike({ TENANT_AUTO_ENROLL: "true" }) },
    });
    for (const { template } of customized.templates) {
      for (const [logicalId, lambda] of Object.entries(template.findResources("AWS::Lambda::Function"))) {
        expect(Object.keys(lambda.Properties.Environment?.Variables ?? {}), logicalId).not.toContain("TENANT_PLANS_JSON");
      }
    }
  });

  it("keeps auto-enroll off by default; with it on, unknown organizations share one key on the default plan", () => {
    root(product).hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: Match.objectLike({ TENANT_AUTO_ENROLL: "false" }) },
    });
    root(product).resourceCountIs("AWS::ApiGateway::ApiKey", 0);
    root(customized).resourceCountIs("AWS::ApiGateway::ApiKey", 1);
    root(customized).resourceCountIs("AWS::ApiGateway::UsagePlanKey", 1);
  });

  it("answers the authorizer's refusals and the plans' limits in the product's error shape, with CORS", () => {
    const responses = root(product).findResources("AWS::ApiGateway::GatewayResponse");
    const byType = new Map(Object.values(responses).map((response) => [response.Properties.ResponseType, response.Properties]));
    const body = (type: string) => JSON.parse(String(byType.get(type)?.ResponseTemplates["application/json"]));
    expect(byType.get("UNAUTHORIZED")).toMatchObject({
      StatusCode: "401",
      ResponseParameters: { "gatewayresponse.header.WWW-Authenticate": "'Bearer'" },
    });
    expect(body("UNAUTHORIZED")).toMatchObject({ status: false, failedCode: "sys-401" });
    expect(byType.get("ACCESS_DENIED")).toMatchObject({ StatusCode: "403" });
    expect(body("ACCESS_DENIED")).toEqual({
      status: false,
      message: "$context.authorizer.message",
      failedCode: "$context.authorizer.failedCode",
      statusCode: 403,
    });
    expect(byType.get("THROTTLED")).toMatchObject({ StatusCode: "429" });
    expect(body("THROTTLED")).toMatchObject({ failedCode: "sys-429" });
    expect(byType.get("QUOTA_EXCEEDED")).toMatchObject({ StatusCode: "429" });
    expect(body("QUOTA_EXCEEDED")).toEqual({
      status: false,
      message: "$context.authorizer.quotaExceededMessage",
      failedCode: "sys-429-quota",
      statusCode: 429,
    });
    for (const type of ["UNAUTHORIZED", "ACCESS_DENIED", "THROTTLED", "QUOTA_EXCEEDED", "INVALID_API_KEY"]) {
      expect(byType.get(type)?.ResponseParameters, type).toMatchObject({ "gatewayresponse.header.Access-Control-Allow-Origin": "'*'" });
    }
  });
});
