import type { Stack } from "aws-cdk-lib";
import type { TableV2 } from "aws-cdk-lib/aws-dynamodb";
import type { Bucket } from "aws-cdk-lib/aws-s3";
import { FunctionCode } from "#infra/constructs/api-function";
import { apiGatewayCloudWatchRoleEntry } from "#infra/constructs/api-gateway-cloudwatch-role";
import { productMetricNamespace } from "#infra/constructs/metric-namespace";
import { authorizerEntry } from "#infra/stacks/field-operations/api";
import {
  deliveryEntry,
  importWorkerEntry,
  type JobQueues,
  publisherEntry,
  tickEntry,
  type WebhookMessaging,
  workerEntry,
} from "#infra/stacks/field-operations/jobs";
import type { TravelProvidersDocument } from "#shared/domain/travel/providers";
import type { RouteDefinition } from "#shared/http/route";

/** What every function (routes and jobs) is told of the stack: its resources' names and the product's settings. */
export type FunctionEnvironment = ReturnType<typeof functionEnvironment>;

export function functionEnvironment(
  stack: Stack,
  props: { appTimeZone: string; corsAllowedOrigins: readonly string[]; travelProviders?: TravelProvidersDocument },
  resources: { table: TableV2; bucket: Bucket; queues: JobQueues; webhooks: WebhookMessaging },
) {
  const { table, bucket } = resources;
  const { runQueue, duePageQueue, importQueue } = resources.queues;
  const { webhookQueue, webhookDeadLetterQueue, webhookKey, eventBus } = resources.webhooks;
  return {
    TABLE_NAME: table.tableName,
    WEBHOOK_QUEUE_URL: webhookQueue.queueUrl,
    WEBHOOK_DEAD_LETTER_QUEUE_URL: webhookDeadLetterQueue.queueUrl,
    WEBHOOK_KMS_KEY_ID: webhookKey.keyArn,
    EVENT_BUS_NAME: eventBus.eventBusName,
    BUCKET_NAME: bucket.bucketName,
    RUN_QUEUE_URL: runQueue.queueUrl,
    DUE_PAGE_QUEUE_URL: duePageQueue.queueUrl,
    IMPORT_QUEUE_URL: importQueue.queueUrl,
    APP_TIMEZONE: props.appTimeZone,
    CORS_ALLOWED_ORIGINS: props.corsAllowedOrigins.join(","),
    POWERTOOLS_SERVICE_NAME: "field-operations-api",
    POWERTOOLS_METRICS_NAMESPACE: productMetricNamespace(stack),
    POWERTOOLS_LOGGER_SAMPLE_RATE: "0.01",
    ...(stack.node.tryGetContext("maxActiveRunsPerOrg") !== undefined
      ? { MAX_ACTIVE_RUNS_PER_ORG: String(stack.node.tryGetContext("maxActiveRunsPerOrg")) }
      : {}),
    ...(props.travelProviders ? { TRAVEL_PROVIDERS_JSON: JSON.stringify(props.travelProviders) } : {}),
  };
}

/** Every function's bundle, built in one esbuild run before any function needs its code. */
export function productCode(
  stack: Stack,
  props: { routes: readonly RouteDefinition[]; repositoryRoot: string; sourceMaps?: boolean; planOverrides: unknown },
): FunctionCode {
  return new FunctionCode(
    stack,
    [
      ...props.routes.map((route) => route.handler),
      tickEntry,
      workerEntry,
      authorizerEntry,
      importWorkerEntry,
      publisherEntry,
      deliveryEntry,
      apiGatewayCloudWatchRoleEntry,
    ],
    { repositoryRoot: props.repositoryRoot, sourceMaps: props.sourceMaps ?? false, planOverrides: props.planOverrides },
  );
}
