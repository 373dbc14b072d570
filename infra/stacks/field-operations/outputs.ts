import { CfnOutput, type Stack } from "aws-cdk-lib";
import type { RestApi } from "aws-cdk-lib/aws-apigateway";
import type { Alarm } from "aws-cdk-lib/aws-cloudwatch";
import type { TableV2 } from "aws-cdk-lib/aws-dynamodb";
import type { Bucket } from "aws-cdk-lib/aws-s3";
import type { Topic } from "aws-cdk-lib/aws-sns";
import type { JobQueues, JobWorkers, WebhookMessaging } from "#infra/stacks/field-operations/jobs";

/**
 * The stack's outputs: what clients, `npm run ops`, `npm run replay -- --aws` and the runbook
 * (docs/operations.md) address by name.
 */
export function stackOutputs(
  stack: Stack,
  resources: {
    api: RestApi;
    table: TableV2;
    bucket: Bucket;
    queues: JobQueues;
    webhooks: WebhookMessaging;
    jobs: JobWorkers;
    alarms: readonly Alarm[];
    jobAlarms: readonly Alarm[];
    alarmTopic: Topic;
  },
): void {
  const { api, table, bucket, alarms, jobAlarms, alarmTopic } = resources;
  const { runQueue, spilloverQueue, duePageQueue, importQueue, deadLetterQueue, importDeadLetterQueue } = resources.queues;
  const { eventBus, webhookQueue, webhookDeadLetterQueue } = resources.webhooks;
  const { publisher, publisherFailureQueue, tickRule } = resources.jobs;

  new CfnOutput(stack, "ApiUrl", { value: api.url, description: "Base URL (ends with /v3/)" });
  new CfnOutput(stack, "TableName", { value: table.tableName });
  new CfnOutput(stack, "BucketName", { value: bucket.bucketName });
  new CfnOutput(stack, "RunQueueUrl", { value: runQueue.queueUrl });
  new CfnOutput(stack, "ImportQueueArn", { value: importQueue.queueArn });
  // What `npm run ops -- pause-runs|resume-runs --aws` turns off and on (the run worker's event sources).
  new CfnOutput(stack, "RunQueueArn", { value: runQueue.queueArn });
  new CfnOutput(stack, "RunSpilloverQueueArn", { value: spilloverQueue.queueArn });
  new CfnOutput(stack, "DuePageQueueArn", { value: duePageQueue.queueArn });
  new CfnOutput(stack, "WebhookQueueArn", { value: webhookQueue.queueArn });
  new CfnOutput(stack, "EventBusName", {
    value: eventBus.eventBusName,
    description: "Every domain event (source field-operations-api, detail-type = event type)",
  });
  new CfnOutput(stack, "EventBusArn", { value: eventBus.eventBusArn });
  // What `npm run replay -- --aws <source>` and the runbook address by name.
  for (const [name, queue] of Object.entries({
    RunDeadLetterQueue: deadLetterQueue,
    ImportDeadLetterQueue: importDeadLetterQueue,
    WebhookDeadLetterQueue: webhookDeadLetterQueue,
    WebhookPublisherFailureQueue: publisherFailureQueue,
  })) {
    new CfnOutput(stack, `${name}Url`, { value: queue.queueUrl });
    new CfnOutput(stack, `${name}Arn`, { value: queue.queueArn });
  }
  new CfnOutput(stack, "WebhookPublisherFunctionName", { value: publisher.functionName });
  // The runbook's names (docs/operations.md, Runbook): every root alarm, every queue, the tick rule, the topic.
  for (const alarm of alarms) {
    const id = jobAlarms.includes(alarm) ? `Job${alarm.node.id}` : alarm.node.id;
    new CfnOutput(stack, `${id}Name`, { value: alarm.alarmName });
  }
  for (const [name, queue] of Object.entries({
    RunQueue: runQueue,
    RunSpilloverQueue: spilloverQueue,
    DuePageQueue: duePageQueue,
    ImportQueue: importQueue,
    WebhookQueue: webhookQueue,
    RunDeadLetterQueue: deadLetterQueue,
    ImportDeadLetterQueue: importDeadLetterQueue,
    WebhookDeadLetterQueue: webhookDeadLetterQueue,
    WebhookPublisherFailureQueue: publisherFailureQueue,
  })) {
    new CfnOutput(stack, `${name}Name`, { value: queue.queueName });
    if (!stack.node.tryFindChild(`${name}Url`)) new CfnOutput(stack, `${name}Url`, { value: queue.queueUrl });
  }
  new CfnOutput(stack, "SchedulerTickRuleName", { value: tickRule.ruleName });
  new CfnOutput(stack, "AlarmTopicArn", { value: alarmTopic.topicArn });
  new CfnOutput(stack, "TableStreamArn", { value: table.tableStreamArn ?? "" });
}
