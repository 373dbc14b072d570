import { RemovalPolicy, Stack } from "aws-cdk-lib";
import { LogGroupClass, type LogGroupProps, RetentionDays } from "aws-cdk-lib/aws-logs";
import { CfnSamplingRule } from "aws-cdk-lib/aws-xray";
import type { Construct } from "constructs";

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
const allowedRetentionDays = Object.values(RetentionDays).filter((value): value is RetentionDays => typeof value === "number");

function retentionDays(scope: Construct, key: string, fallback: number): RetentionDays {
  const days = Number(scope.node.tryGetContext(key) ?? fallback);
  if (!allowedRetentionDays.includes(days as RetentionDays))
    throw new Error(`context ${key}: ${days} is not a CloudWatch Logs retention period (${allowedRetentionDays.join(", ")})`);
  return days as RetentionDays;
}

function quietLogGroupClass(scope: Construct): LogGroupClass {
  const value = String(scope.node.tryGetContext("logGroupClass") ?? "INFREQUENT_ACCESS").toUpperCase();
  if (value === "STANDARD") return LogGroupClass.STANDARD;
  if (value === "INFREQUENT_ACCESS") return LogGroupClass.INFREQUENT_ACCESS;
  throw new Error(`context logGroupClass: ${value} is neither STANDARD nor INFREQUENT_ACCESS`);
}

/**
 * Props of a product log group. `metrics`: the group's lines feed metrics (EMF, metric filters),
 * so it stays Standard; `access`: the API access log, kept longer.
 */
export function productLogGroupProps(scope: Construct, kind: "api" | "access" | "metrics"): LogGroupProps {
  return {
    retention: kind === "access" ? retentionDays(scope, "accessLogRetentionDays", 90) : retentionDays(scope, "logRetentionDays", 30),
    logGroupClass: kind === "metrics" ? LogGroupClass.STANDARD : quietLogGroupClass(scope),
    removalPolicy: RemovalPolicy.DESTROY,
  };
}

/** The API stage's X-Ray sampling rule (see above); `apiName` and `stageName` name the stage as X-Ray sees it (`<api name>/<stage>`). */
export function apiSamplingRule(scope: Construct, apiName: string, stageName: string): CfnSamplingRule {
  const reservoirSize = Number(scope.node.tryGetContext("xraySamplingReservoir") ?? 1);
  const fixedRate = Number(scope.node.tryGetContext("xraySamplingRate") ?? 0.01);
  if (!Number.isInteger(reservoirSize) || reservoirSize < 0)
    throw new Error(`context xraySamplingReservoir: ${reservoirSize} is not a whole number ≥ 0`);
  if (!(fixedRate >= 0 && fixedRate <= 1)) throw new Error(`context xraySamplingRate: ${fixedRate} is not between 0 and 1`);
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
