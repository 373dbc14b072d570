import { Duration, type Stack } from "aws-cdk-lib";
import { Dashboard, GraphWidget, type IMetric, MathExpression, Metric, TextWidget } from "aws-cdk-lib/aws-cloudwatch";
import type { RestApi } from "aws-cdk-lib/aws-apigateway";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import type { IQueue } from "aws-cdk-lib/aws-sqs";
import type { ApiAreaStack } from "#infra/stacks/api-area-stack";
import { productMetricNamespace } from "#infra/constructs/metric-namespace";

/** The namespace and dimension the jobs publish their metrics under (shared/observability/powertools.ts, job-handler.ts). */
const customMetric = (stack: Stack, job: string, metricName: string, statistic = "Sum") =>
  new Metric({
    namespace: productMetricNamespace(stack),
    metricName,
    dimensionsMap: { service: "field-operations-api", job },
    statistic,
    period: Duration.minutes(5),
  });

/** Sums (or takes the largest of) one Lambda metric over a group of functions. */
function overFunctions(
  id: string,
  label: string,
  functions: readonly IFunction[],
  metricOf: (fn: IFunction) => IMetric,
  combine: "SUM" | "MAX",
): MathExpression {
  const usingMetrics = Object.fromEntries(functions.map((fn, index) => [`${id}f${index}`, metricOf(fn)]));
  const keys = Object.keys(usingMetrics);
  return new MathExpression({
    expression: combine === "SUM" ? keys.join(" + ") : `MAX([${keys.join(", ")}])`,
    usingMetrics,
    label,
    period: Duration.minutes(5),
  });
}

/**
 * One dashboard of what the runbook (docs/operations.md) reads: the API (requests, latency, 5xx)
 * and each area's functions (errors, slowest p95), the queues' oldest message, the tick (duration,
 * what was due), the runs (outcomes, optimizer time, worker duration) and the imports.
 */
export function operationsDashboard(
  stack: Stack,
  resources: {
    api: RestApi;
    areaStacks: readonly ApiAreaStack[];
    tick: IFunction;
    worker: IFunction;
    importWorker: IFunction;
    /** Every queue, by the name its line carries (the work queues, the dead-letter queues, the publisher's failure queue). */
    queues: Record<string, IQueue>;
  },
): Dashboard {
  const { api, areaStacks, tick, worker, importWorker, queues } = resources;
  const period = Duration.minutes(5);
  const dashboard = new Dashboard(stack, "OperationsDashboard", {
    dashboardName: `${stack.stackName}-operations`,
    defaultInterval: Duration.hours(6),
  });
  const areaName = (area: ApiAreaStack) => area.node.id.replace(/Api$/, "");
  dashboard.addWidgets(
    new TextWidget({ markdown: "# Field Operations API\nAlarms and what to do: docs/operations.md, Runbook.", width: 24, height: 1 }),
    new GraphWidget({
      title: "API requests and 5xx",
      left: [api.metricCount({ period, statistic: "Sum" })],
      right: [api.metricServerError({ period, statistic: "Sum" }), api.metricClientError({ period, statistic: "Sum" })],
      width: 12,
    }),
    new GraphWidget({
      title: "API latency (ms)",
      left: [
        api.metricLatency({ period, statistic: "p50" }),
        api.metricLatency({ period, statistic: "p99" }),
        api.metricIntegrationLatency({ period, statistic: "p99" }),
      ],
      width: 12,
    }),
    new GraphWidget({
      title: "Function errors by API area (5xx come from these)",
      left: areaStacks.map((area, index) =>
        overFunctions(
          `a${index}`,
          areaName(area),
          area.functions.map(({ fn }) => fn),
          (fn) => fn.metricErrors({ period, statistic: "Sum" }),
          "SUM",
        ),
      ),
      width: 12,
    }),
    new GraphWidget({
      title: "Slowest function p95 by API area (ms)",
      left: areaStacks.map((area, index) =>
        overFunctions(
          `a${index}`,
          areaName(area),
          area.functions.map(({ fn }) => fn),
          (fn) => fn.metricDuration({ period, statistic: "p95" }),
          "MAX",
        ),
      ),
      width: 12,
    }),
    new GraphWidget({
      title: "Oldest message per queue (s)",
      left: Object.entries(queues).map(([name, queue]) =>
        queue.metricApproximateAgeOfOldestMessage({ period, statistic: "Maximum", label: name }),
      ),
      width: 12,
    }),
    new GraphWidget({
      title: "Messages waiting per queue",
      left: Object.entries(queues).map(([name, queue]) =>
        queue.metricApproximateNumberOfMessagesVisible({ period, statistic: "Maximum", label: name }),
      ),
      width: 12,
    }),
    new GraphWidget({
      title: "Scheduler tick: duration (ms) and what was due",
      left: [tick.metricDuration({ period, statistic: "Maximum" })],
      right: ["TickEnqueued", "TickFannedOut", "TickMissed", "TickFailed", "TickOverCap"].map((name) =>
        customMetric(stack, "scheduler-tick", name),
      ),
      width: 12,
    }),
    new GraphWidget({
      title: "Routing runs: outcomes, optimizer and worker time",
      left: ["RunDone", "RunSkipped", "RunFailed", "RunDeferred"].map((name) => customMetric(stack, "routing-run", name)),
      right: [customMetric(stack, "routing-run", "OptimizerSeconds", "p95"), worker.metricDuration({ period, statistic: "p95" })],
      width: 12,
    }),
    new GraphWidget({
      title: "Legacy imports: steps ended, errors, worker duration",
      left: ["ImportStepFinished", "ImportStepFailed", "ImportStepError"].map((name) => customMetric(stack, "legacy-import", name)),
      right: [importWorker.metricDuration({ period, statistic: "p95" })],
      width: 12,
    }),
  );
  return dashboard;
}
