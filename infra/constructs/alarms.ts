import { Duration } from "aws-cdk-lib";
import { Alarm, ComparisonOperator, MathExpression, type IMetric, Metric, TreatMissingData } from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import type { ITopic } from "aws-cdk-lib/aws-sns";
import type { Construct } from "constructs";
import { productMetricNamespace } from "#infra/constructs/metric-namespace";

/** CloudWatch lets an alarm's metric math read at most 10 metrics; larger groups get one alarm per slice. */
export const metricsPerAlarm = 10;

/**
 * One alarm per function group (an API area, the jobs) and per metric, summing the group's
 * functions with metric math, instead of one alarm per function: Errors (unhandled failures or
 * timeouts) and Throttles (concurrency exhausted), each firing on the first one in 5 minutes.
 */
export function functionGroupAlarms(scope: Construct, group: string, functions: readonly IFunction[], topic: ITopic): Alarm[] {
  const alarms: Alarm[] = [];
  for (let start = 0; start < functions.length; start += metricsPerAlarm) {
    const slice = functions.slice(start, start + metricsPerAlarm);
    const suffix = functions.length > metricsPerAlarm ? `${start / metricsPerAlarm + 1}` : "";
    for (const [metricName, metricOf] of [
      ["Errors", (fn: IFunction) => fn.metricErrors({ period: Duration.minutes(5), statistic: "Sum" })],
      ["Throttles", (fn: IFunction) => fn.metricThrottles({ period: Duration.minutes(5), statistic: "Sum" })],
    ] as const) {
      const usingMetrics: Record<string, IMetric> = Object.fromEntries(slice.map((fn, index) => [`f${index}`, metricOf(fn)]));
      const alarm = new Alarm(scope, `${metricName}Alarm${suffix}`, {
        alarmDescription: `${group}: Lambda ${metricName} of ${slice.length} function(s) (docs/operations.md, Runbook: "${metricName}")`,
        metric: new MathExpression({
          expression: Object.keys(usingMetrics).join(" + "),
          usingMetrics,
          period: Duration.minutes(5),
          label: `${group} ${metricName}`,
        }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      alarm.addAlarmAction(new SnsAction(topic));
      alarms.push(alarm);
    }
  }
  return alarms;
}

/**
 * The run worker rejected a plan that broke a constraint (metric PlanRejected, functions/jobs/routing-run.ts): it
 * was never stored, but the optimizer produced it; the log line has its seed and violations to reproduce it.
 */
export function planRejectedAlarm(scope: Construct): Alarm {
  return new Alarm(scope, "PlanRejectedAlarm", {
    alarmDescription:
      'The run worker rejected an optimizer plan that broke a constraint; it was not stored (docs/operations.md, Runbook: "PlanRejected")',
    metric: new Metric({
      namespace: productMetricNamespace(scope),
      metricName: "PlanRejected",
      dimensionsMap: { service: "field-operations-api", job: "routing-run" },
      statistic: "Sum",
      period: Duration.minutes(5),
    }),
    threshold: 0,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}
