import { App, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks, ServerlessChecks } from "cdk-nag";
import { jwtIssuersFromContext } from "#infra/jwt-issuers-context";
import { routes as productRoutes } from "#functions/routes";
import type { RouteDefinition } from "#shared/http/route";
import { FieldOperationsStack } from "#infra/stacks/field-operations-stack";
import { repositoryRoot } from "#infra/repository-root";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { planOverridesFromEnvironment } from "#shared/config/tenant-plans";
import { defaultAuthorizerCacheTtlSeconds } from "#shared/domain/tenants/access";
import { planCatalog, type PlanOverrides } from "#shared/domain/tenants/plan-catalog";
import { parseTravelProviders } from "#shared/domain/travel/providers";
import { parseDeployContext } from "#shared/config/deploy-config";

/**
 * Builds the CDK app. JWT settings and the app time zone come from CDK context (cdk.json, or
 * `-c jwtIssuer=… -c jwtAudience=… -c jwtJwksUri=…` or `-c jwtIssuersFile=…` for several, and
 * `-c appTimeZone=…`), as do `corsAllowedOrigins`,
 * `sourceMaps`, `alarmEmail`, and tenancy: `tenantPlansFile`, `tenantAutoEnroll` (default false),
 * `authorizerCacheTtlSeconds` (default 300), `apiGatewayAccountRole` / `apiGatewayExecutionLogs`
 * (execution logging; off by default), `logLevel` (default INFO), and `travelProviders` (a JSON
 * document of road-network travel providers, relative to the repository; docs/operations.md
 * "Road-network travel"). Tests may pass another route
 * table (e.g. a synthetic one three times as large, to check the resource headroom).
 */
export function buildApp(
  app: App = new App(),
  options: { routes?: readonly RouteDefinition[]; planOverrides?: PlanOverrides } = {},
): { app: App; stack: FieldOperationsStack } {
  // Every flag checked by one schema first (shared/config/deploy-config.ts): a bad value fails synth naming it.
  parseDeployContext((key) => app.node.tryGetContext(key));
  const context = (key: string, fallback: string) => (app.node.tryGetContext(key) as string | undefined) ?? fallback;
  // The operator's plans: context tenantPlansFile (a JSON document, relative to the repository), else TENANT_PLANS_FILE.
  const plansFile = app.node.tryGetContext("tenantPlansFile") as string | undefined;
  const planOverrides =
    options.planOverrides ??
    (plansFile
      ? JSON.parse(readFileSync(resolve(repositoryRoot, plansFile), "utf8"))
      : planOverridesFromEnvironment({ TENANT_PLANS_FILE: process.env.TENANT_PLANS_FILE }));
  // Validated here, so a bad document fails `cdk synth` rather than the first run.
  const travelProvidersFile = app.node.tryGetContext("travelProviders") as string | undefined;
  const travelProviders = travelProvidersFile
    ? parseTravelProviders(JSON.parse(readFileSync(resolve(repositoryRoot, travelProvidersFile), "utf8")))
    : undefined;
  const stack = new FieldOperationsStack(app, context("stackName", "FieldOperations"), {
    routes: options.routes ?? productRoutes,
    repositoryRoot,
    jwtIssuers: jwtIssuersFromContext((key) => app.node.tryGetContext(key)),
    appTimeZone: context("appTimeZone", "UTC"),
    corsAllowedOrigins: context("corsAllowedOrigins", "*")
      .split(",")
      .map((origin) => origin.trim())
      .filter((origin) => origin.length > 0),
    sourceMaps: String(app.node.tryGetContext("sourceMaps")) === "true",
    apiGatewayAccountRole: String(app.node.tryGetContext("apiGatewayAccountRole")) === "true",
    apiGatewayExecutionLogs: String(app.node.tryGetContext("apiGatewayExecutionLogs")) === "true",
    ...(app.node.tryGetContext("alarmEmail") ? { alarmEmail: context("alarmEmail", "") } : {}),
    ...(app.node.tryGetContext("webAclArn") ? { webAclArn: context("webAclArn", "") } : {}),
    tenancy: {
      plans: planCatalog(planOverrides),
      planOverrides,
      autoEnroll: String(app.node.tryGetContext("tenantAutoEnroll")) === "true",
      authorizerCacheTtlSeconds: Number(context("authorizerCacheTtlSeconds", String(defaultAuthorizerCacheTtlSeconds))),
    },
    ...(travelProviders ? { travelProviders } : {}),
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
  // Both cdk-nag packs; each finding the design accepts is acknowledged with the decision behind it.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  return { app, stack };
}
