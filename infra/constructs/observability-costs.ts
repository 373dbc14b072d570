import { RemovalPolicy, Stack } from "aws-cdk-lib";
import { LogGroupClass, type LogGroupProps, type RetentionDays } from "aws-cdk-lib/aws-logs";
import { CfnSamplingRule } from "aws-cdk-lib/aws-xray";
import type { Construct } from "constructs";
import { parseDeployContext } from "#shared/config/deploy-config";

/**
 * What logs and traces cost, set by context in one place (docs/operations.md, "Logs and traces: what
 * they cost"):
 * - `logRetentionDays` (default 30): the functions' log groups; `accessLogRetentionDays` (default 90): the access log.
 * - `logGroupClass` (default `INFREQUENT_ACCESS`, or `STANDARD`): the class of the log groups no metric
 *   needs — the API areas' groups and the access log. Infrequent Access ingests at half the price and
 *   keeps Logs Insights, but has no metric filters and no embedded-metric (EMF) extraction, so the
 *   jobs' groups (their EMF metrics feed alarms) stay Standard. A log group's class cannot change in
 *   place: CloudFormation replaces the group (its old lines are deleted), so a deployed stack that
 *   wants to keep its groups deploys with `-c logGroupClass=STANDARD`.
 * - `xraySamplingReservoir` (default 1 per second) and `xraySamplingRate` (default 0.01): the API
 *   stage's X-Ray sampling rule. The stage decides for the whole trace (its function follows the
 *   decision), so API routes are traced at 1/s + 1 % instead of X-Ray's default 1/s + 5 %. The jobs
 *   start their own traces: Lambda samples those at its fixed 1 per second (+ 5 %), which at the
 *   jobs' rates (a tick a minute, a few runs a minute) traces every invocation.
 */
/** The flags above, checked by the one context schema (shared/config/deploy-config.ts). */
function observabilityContext(scope: Construct) {
  return parseDeployContext((key) => scope.node.tryGetContext(key));
}

/**
 * Props of a product log group. `metrics`: the group's lines feed metrics (EMF, metric filters),
 * so it stays Standard; `access`: the API access log, kept longer.
 */
export function productLogGroupProps(scope: Construct, kind: "api" | "access" | "metrics"): LogGroupProps {
  const context = observabilityContext(scope);
  const quietClass =
    (context.logGroupClass ?? "INFREQUENT_ACCESS") === "STANDARD" ? LogGroupClass.STANDARD : LogGroupClass.INFREQUENT_ACCESS;
  return {
    retention: (kind === "access" ? (context.accessLogRetentionDays ?? 90) : (context.logRetentionDays ?? 30)) as RetentionDays,
    logGroupClass: kind === "metrics" ? LogGroupClass.STANDARD : quietClass,
    removalPolicy: RemovalPolicy.DESTROY,
  };
}

/** The API stage's X-Ray sampling rule (see above); `apiName` and `stageName` name the stage as X-Ray sees it (`<api name>/<stage>`). */
export function apiSamplingRule(scope: Construct, apiName: string, stageName: string): CfnSamplingRule {
  const context = observabilityContext(scope);
  const reservoirSize = context.xraySamplingReservoir ?? 1;
  const fixedRate = context.xraySamplingRate ?? 0.01;
  // Rule names are unique per account and region, at most 32 characters: the stack's name makes it this stack's.
  const ruleName = `${Stack.of(scope).stackName}`.replace(/[^A-Za-z0-9_-]/g, "").slice(0, 28) + "-api";
  return new CfnSamplingRule(scope, "ApiSamplingRule", {
    samplingRule: {
      ruleName,
      // Before X-Ray's Default rule (10000), which would otherwise sample 1/s + 5 %.
      priority: 9000,
      reservoirSize,
      fixedRate,
      serviceName: `${apiName}/${stageName}`,
      serviceType: "AWS::ApiGateway::Stage",
      host: "*",
      httpMethod: "*",
      urlPath: "*",
      resourceArn: "*",
      version: 1,
    },
  });
}
