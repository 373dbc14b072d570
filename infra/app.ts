import { App, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { routes as productRoutes } from "#functions/routes";
import type { RouteDefinition } from "#shared/http/route";
import { FieldOperationsStack } from "#infra/stacks/field-operations-stack";
import { repositoryRoot } from "#infra/repository-root";

/**
 * Builds the CDK app. JWT settings and the app time zone come from CDK context (cdk.json, or
 * `-c jwtIssuer=… -c jwtAudience=… -c jwtJwksUri=… -c appTimeZone=…`), as do `corsAllowedOrigins`,
 * `sourceMaps` and `alarmEmail`. Tests may pass another route
 * table (e.g. a synthetic one three times as large, to check the resource headroom).
 */
export function buildApp(app: App = new App(), options: { routes?: readonly RouteDefinition[] } = {}): { app: App; stack: FieldOperationsStack } {
  const context = (key: string, fallback: string) => (app.node.tryGetContext(key) as string | undefined) ?? fallback;
  const stack = new FieldOperationsStack(app, context("stackName", "FieldOperations"), {
    routes: options.routes ?? productRoutes,
    repositoryRoot,
    jwt: {
      issuer: context("jwtIssuer", "https://issuer.example.com"),
      audience: context("jwtAudience", "field-operations-api"),
      jwksUri: context("jwtJwksUri", "https://issuer.example.com/.well-known/jwks.json"),
    },
    appTimeZone: context("appTimeZone", "UTC"),
    corsAllowedOrigins: context("corsAllowedOrigins", "*")
      .split(",")
      .map((origin) => origin.trim())
      .filter((origin) => origin.length > 0),
    sourceMaps: String(app.node.tryGetContext("sourceMaps")) === "true",
    ...(app.node.tryGetContext("alarmEmail") ? { alarmEmail: context("alarmEmail", "") } : {}),
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack };
}
