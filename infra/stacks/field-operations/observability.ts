import { Duration, type Stack, Validations } from "aws-cdk-lib";
import type { RestApi } from "aws-cdk-lib/aws-apigateway";
import { Alarm, ComparisonOperator, type IMetric, MathExpression, Metric, TreatMissingData } from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import type { TableV2 } from "aws-cdk-lib/aws-dynamodb";
import { LogGroup, type MetricFilter } from "aws-cdk-lib/aws-logs";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import type { ProductFunction } from "#infra/constructs/api-function";
import { functionGroupAlarms, planRejectedAlarm } from "#infra/constructs/alarms";
import { operationsDashboard } from "#infra/constructs/dashboard";
import { productLogGroupProps } from "#infra/constructs/observability-costs";
import type { ApiAreaStack } from "#infra/stacks/api-area-stack";
import { type JobQueues, type JobWorkers, tickTimeout, type WebhookMessaging } from "#infra/stacks/field-operations/jobs";
import {
  deadLetterOldestMessageAlarmSeconds,
  duePageQueueDefinition,
  importQueueDefinition,
  runQueueDefinition,
  runSpilloverQueueDefinition,
} from "#shared/queue/definitions";

/** Where the product's signals go: the API's access log group, and the topic every alarm notifies. */
export function signalDestinations(stack: Stack, alarmEmail: string | undefined): { accessLogs: LogGroup; alarmTopic: Topic } {
  const accessLogs = new LogGroup(stack, "ApiAccessLogs", productLogGroupProps(stack, "access"));
  // Every alarm notifies this topic; context alarmEmail subscribes an address to it.
  const alarmTopic = new Topic(stack, "AlarmTopic", { displayName: "Field Operations API alarms", enforceSSL: true });
  Validations.of(alarmTopic).acknowledge({
    id: "AwsSolutions-SNS2",
    reason: "Alarm notifications carry no customer data, and CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS key.",
  });
  if (alarmEmail) {
    const subscription = alarmTopic.addSubscription(new EmailSubscription(alarmEmail));
    Validations.of(subscription).acknowledge({
      id: "Serverless-SNSRedrivePolicy",
      reason: "An undelivered alarm e-mail has nothing to redrive, and the alarm stays in ALARM on the dashboard.",
    });
  }
  return { accessLogs, alarmTopic };
}

/**
 * The root stack's alarms (jobs, queues, table, authorizer, API), each notifying the topic, and the
 * operations dashboard; each area stack holds its functions' alarms. `jobAlarms` are those of the
 * job functions' group (their outputs carry a `Job` prefix).
 */
export function alarmsAndDashboard(
  stack: Stack,
  resources: {
    alarmTopic: Topic;
    api: RestApi;
    areaStacks: readonly ApiAreaStack[];
    table: TableV2;
    queues: JobQueues;
    webhooks: WebhookMessaging;
    jobs: JobWorkers;
    authorizerFunction: ProductFunction;
    authorizerFailures: MetricFilter;
  },
): { alarms: Alarm[]; jobAlarms: Alarm[] } {
  const { alarmTopic, api, table, authorizerFunction, authorizerFailures } = resources;
  const { runQueue, spilloverQueue, duePageQueue, importQueue, deadLetterQueue, importDeadLetterQueue } = resources.queues;
  const { webhookQueue, webhookDeadLetterQueue } = resources.webhooks;
  const { tick, worker, importWorker, publisher, deliveryWorker, publisherFailureQueue } = resources.jobs;

  /**
   * Every alarm of the stack but TickMissing: it fires when its metric is above the threshold, a
   * period without data is not a breach, and its description ends with its runbook section in
   * docs/operations.md (the id without "Alarm").
   */
  const runbookAlarm = (
    id: string,
    description: string,
    metric: IMetric,
    threshold: number,
    periods: { evaluationPeriods: number; datapointsToAlarm?: number } = { evaluationPeriods: 1 },
  ) =>
    new Alarm(stack, id, {
      alarmDescription: `${description} (docs/operations.md, Runbook: "${id.replace(/Alarm$/, "")}")`,
      metric,
      threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      ...periods,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  const oldestMessageAlarm = (id: string, queue: Queue, seconds: number, evaluationPeriods: number, description: string) =>
    runbookAlarm(
      id,
      description,
      queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5), statistic: "Maximum" }),
      seconds,
      {
        evaluationPeriods,
      },
    );
  // Any message in a dead-letter queue is a failure an operator must look at.
  const deadLetterAlarm = (id: string, queue: Queue, periodMinutes: number, description: string) =>
    runbookAlarm(
      id,
      description,
      queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(periodMinutes), statistic: "Maximum" }),
      0,
    );
  const queueAlarms = [
    oldestMessageAlarm(
      "RunQueueAgeAlarm",
      runQueue,
      runQueueDefinition.oldestMessageAlarmSeconds,
      3,
      `The oldest waiting routing run waited over ${runQueueDefinition.oldestMessageAlarmSeconds / 60} minutes for 15 minutes: runs back up behind the workers`,
    ),
    oldestMessageAlarm(
      "RunSpilloverQueueAgeAlarm",
      spilloverQueue,
      runSpilloverQueueDefinition.oldestMessageAlarmSeconds,
      3,
      `The oldest run beyond its organization's share of the workers waited over ${runSpilloverQueueDefinition.oldestMessageAlarmSeconds / 3600} hours for 15 minutes: a flooding organization's backlog is not draining`,
    ),
    oldestMessageAlarm(
      "DuePageQueueAgeAlarm",
      duePageQueue,
      duePageQueueDefinition.oldestMessageAlarmSeconds,
      1,
      `A fan-out page of due schedules waited over ${duePageQueueDefinition.oldestMessageAlarmSeconds / 60} minutes: due runs are not being enqueued`,
    ),
    oldestMessageAlarm(
      "ImportQueueAgeAlarm",
      importQueue,
      importQueueDefinition.oldestMessageAlarmSeconds,
      3,
      `The oldest legacy-import step waited over ${importQueueDefinition.oldestMessageAlarmSeconds / 60} minutes for 15 minutes: imports are not progressing`,
    ),
    oldestMessageAlarm(
      "DeadLetterQueueAgeAlarm",
      deadLetterQueue,
      deadLetterOldestMessageAlarmSeconds,
      1,
      "A failed routing run or due page has waited a week in the dead-letter queue: redrive or inspect it before the 14-day retention drops it",
    ),
    oldestMessageAlarm(
      "ImportDeadLetterQueueAgeAlarm",
      importDeadLetterQueue,
      deadLetterOldestMessageAlarmSeconds,
      1,
      "A failed legacy-import step has waited a week in the dead-letter queue: inspect it before the 14-day retention drops it",
    ),
    new Alarm(stack, "TickMissingAlarm", {
      alarmDescription:
        'The scheduler tick did not run in 5 consecutive minutes (no invocations: rule disabled, function deleted or throttled); no runs are enqueued (docs/operations.md, Runbook: "TickMissing")',
      metric: tick.metricInvocations({ period: Duration.minutes(1), statistic: "Sum" }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 5,
      // No data is exactly what a tick that stopped looks like.
      treatMissingData: TreatMissingData.BREACHING,
    }),
  ];
  // The group alarms notify the topic themselves.
  const jobAlarms = functionGroupAlarms(
    new Construct(stack, "JobAlarms"),
    "Jobs (scheduler tick, routing-run worker, legacy-import worker, webhook publisher and delivery)",
    [tick, worker, importWorker, publisher, deliveryWorker],
    alarmTopic,
  );
  const alarms = [
    planRejectedAlarm(stack),
    ...jobAlarms,
    ...queueAlarms,
    deadLetterAlarm(
      "WebhookDeadLetterQueueAlarm",
      webhookDeadLetterQueue,
      5,
      "Webhook deliveries ran out of attempts (or could not run) and wait in the dead-letter queue",
    ),
    deadLetterAlarm(
      "ImportDeadLetterQueueAlarm",
      importDeadLetterQueue,
      1,
      "A legacy-import step failed 3 deliveries and waits in the dead-letter queue; its data type stays locked",
    ),
    deadLetterAlarm("DeadLetterQueueAlarm", deadLetterQueue, 1, "Routing runs failed 3 deliveries and wait in the dead-letter queue"),
    // The authorizer throws "Unauthorized" for every bad token (Lambda counts those as Errors): its
    // own failures (JWKS unreachable, store errors) are the log lines counted as AuthorizerFailures.
    runbookAlarm(
      "AuthorizerFailureAlarm",
      "The tenant authorizer failed on its own (JWKS unreachable, tenant store error), not on a bad token: callers get 401 or 500",
      authorizerFailures.metric({ period: Duration.minutes(5), statistic: "Sum" }),
      0,
    ),
    runbookAlarm(
      "AuthorizerThrottlesAlarm",
      "Lambda refused tenant authorizer invocations (concurrency used up): callers get 500",
      authorizerFunction.metricThrottles({ period: Duration.minutes(5), statistic: "Sum" }),
      0,
    ),
    runbookAlarm(
      "TableThrottleAlarm",
      "DynamoDB throttled reads or writes of the table in 2 of 3 periods of 5 minutes (a hot partition or key): requests answer 503 sys-503 after their retry budget",
      new MathExpression({
        expression: "reads + writes",
        usingMetrics: {
          reads: tableMetric(table, "ReadThrottleEvents"),
          writes: tableMetric(table, "WriteThrottleEvents"),
        },
        period: Duration.minutes(5),
        label: "Table throttle events",
      }),
      0,
      { evaluationPeriods: 3, datapointsToAlarm: 2 },
    ),
    oldestMessageAlarm(
      "WebhookQueueAgeAlarm",
      webhookQueue,
      webhookOldestMessageAlarmSeconds,
      3,
      `The oldest webhook delivery waited over ${webhookOldestMessageAlarmSeconds / 60} minutes for 15 minutes: deliveries back up behind the delivery workers`,
    ),
    oldestMessageAlarm(
      "WebhookDeadLetterQueueAgeAlarm",
      webhookDeadLetterQueue,
      deadLetterOldestMessageAlarmSeconds,
      1,
      "A failed webhook delivery has waited a week in the dead-letter queue: redrive or purge it before the 14-day retention drops it",
    ),
    deadLetterAlarm(
      "WebhookPublisherFailureAlarm",
      publisherFailureQueue,
      1,
      "A batch of table changes failed the webhook publisher's retries: its events were not published; replay it within 24 h of the writes",
    ),
    runbookAlarm(
      "WebhookPublisherIteratorAgeAlarm",
      `The webhook publisher is over ${publisherIteratorAgeAlarmMinutes} minutes behind the table's stream for 15 minutes: events are late, and records older than 24 h leave the stream`,
      publisher.metric("IteratorAge", { period: Duration.minutes(5), statistic: "Maximum" }),
      publisherIteratorAgeAlarmMinutes * 60_000,
      { evaluationPeriods: 3 },
    ),
    runbookAlarm(
      "Api5xxRateAlarm",
      "More than 1 % of API requests answered 5xx over 5 minutes, once at least 20 arrived",
      new MathExpression({
        expression: "IF(requests >= 20, 100 * errors / requests, 0)",
        usingMetrics: {
          errors: api.metricServerError({ period: Duration.minutes(5), statistic: "Sum" }),
          requests: api.metricCount({ period: Duration.minutes(5), statistic: "Sum" }),
        },
        period: Duration.minutes(5),
        label: "API 5xx %",
      }),
      1,
    ),
    runbookAlarm(
      "TickFailedAlarm",
      "The scheduler tick failed (an invocation error or timeout): due runs may not be enqueued",
      tick.metricErrors({ period: Duration.minutes(1), statistic: "Sum" }),
      0,
    ),
    runbookAlarm(
      "TickNearTimeoutAlarm",
      `The scheduler tick ran over 80 % of its ${tickTimeout.toSeconds()} s timeout in 2 of 3 minutes`,
      tick.metricDuration({ period: Duration.minutes(1), statistic: "Maximum" }),
      tickTimeout.toMilliseconds() * 0.8,
      { evaluationPeriods: 3, datapointsToAlarm: 2 },
    ),
  ];
  for (const alarm of alarms.filter((each) => !jobAlarms.includes(each))) alarm.addAlarmAction(new SnsAction(alarmTopic));

  operationsDashboard(stack, {
    api,
    areaStacks: resources.areaStacks,
    tick,
    worker,
    importWorker,
    queues: {
      runQueue,
      spilloverQueue,
      duePageQueue,
      importQueue,
      deadLetterQueue,
      importDeadLetterQueue,
      webhookQueue,
      webhookDeadLetterQueue,
      publisherFailureQueue,
    },
  });
  return { alarms, jobAlarms };
}

/** A delivery waiting this long (3 periods of 5 minutes) alarms: attempts are scheduled minutes apart, never this late. */
export const webhookOldestMessageAlarmSeconds = 15 * 60;

/** The publisher's stream lag that alarms: far below the stream's 24 h, far above a healthy second or two. */
export const publisherIteratorAgeAlarmMinutes = 10;

const tableMetric = (table: TableV2, metricName: string) =>
  new Metric({
    namespace: "AWS/DynamoDB",
    metricName,
    dimensionsMap: { TableName: table.tableName },
    period: Duration.minutes(5),
    statistic: "Sum",
  });
