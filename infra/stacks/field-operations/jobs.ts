import { Duration, RemovalPolicy, type Stack, Validations } from "aws-cdk-lib";
import type { TableV2 } from "aws-cdk-lib/aws-dynamodb";
import { EventBus, Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { type IRole, PolicyStatement } from "aws-cdk-lib/aws-iam";
import { Key } from "aws-cdk-lib/aws-kms";
import { FilterCriteria, StartingPosition } from "aws-cdk-lib/aws-lambda";
import { DynamoEventSource, SqsDlq, SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import type { Bucket } from "aws-cdk-lib/aws-s3";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import { type FunctionCode, ProductFunction } from "#infra/constructs/api-function";
import { tenantSlotCap } from "#shared/domain/fairness/worker-slots";
import type { TravelProvidersDocument } from "#shared/domain/travel/providers";
import { streamFilterPattern } from "#shared/domain/webhooks/state-changes";
import type { RouteGrant } from "#shared/http/route";
import {
  defaultRunWorkerMaxConcurrency,
  duePageQueueDefinition,
  importQueueDefinition,
  importWorkerTimeoutSeconds,
  runQueueDefinition,
  runSpilloverQueueDefinition,
  runWorkerMemoryMb,
  runWorkerTimeoutSeconds,
  spilloverMaxConcurrency,
  webhookQueueDefinition,
  webhookSlotsPerTenant,
  webhookWorkerTimeoutSeconds,
} from "#shared/queue/definitions";
import { objectKinds } from "#shared/store/keys";
import type { ProductGrants } from "#infra/stacks/field-operations/grants";

/** The queues of the background jobs: routing runs (with the spillover and the tick's fan-out pages) and imports. */
export interface JobQueues {
  deadLetterQueue: Queue;
  runQueue: Queue;
  spilloverQueue: Queue;
  duePageQueue: Queue;
  importDeadLetterQueue: Queue;
  importQueue: Queue;
  /** At most this many run workers at once (context runWorkerMaxConcurrency). */
  maxConcurrency: number;
  /** The workers one organization's runs may hold. */
  runWorkerShare: number;
  /** What the run enqueuers (the tick, the worker's due pages, POST /routing/result) need to route a run by its organization's share. */
  runEnqueueEnvironment: Record<string, string>;
}

export function jobQueues(stack: Stack): JobQueues {
  const deadLetterQueue = deadLetterQueueOf(
    stack,
    "RunDeadLetterQueue",
    runQueueDefinition,
    "This is the dead-letter queue of the run queue.",
  );
  const runQueue = workQueueOf(stack, "RunQueue", runQueueDefinition, deadLetterQueue);

  // At most this many workers at once (context runWorkerMaxConcurrency), so runs cannot take the API's Lambda concurrency.
  const maxConcurrency = Number(stack.node.tryGetContext("runWorkerMaxConcurrency") ?? defaultRunWorkerMaxConcurrency);
  // No organization holds every worker: a run of another always finds one (shared/domain/fairness/worker-slots.ts).
  const runWorkerShare = tenantSlotCap(maxConcurrency);
  // An organization's runs beyond its share wait here, read by that share's workers only (runSpilloverQueueDefinition).
  const spilloverQueue = workQueueOf(stack, "RunSpilloverQueue", runSpilloverQueueDefinition, deadLetterQueue);
  const runEnqueueEnvironment = { RUN_SPILLOVER_QUEUE_URL: spilloverQueue.queueUrl, RUN_WORKER_SLOTS_PER_TENANT: String(runWorkerShare) };

  const duePageQueue = workQueueOf(stack, "DuePageQueue", duePageQueueDefinition, deadLetterQueue);

  const importDeadLetterQueue = deadLetterQueueOf(
    stack,
    "ImportDeadLetterQueue",
    importQueueDefinition,
    "This is the dead-letter queue of the legacy-import queue.",
  );
  const importQueue = workQueueOf(stack, "ImportQueue", importQueueDefinition, importDeadLetterQueue);
  return {
    deadLetterQueue,
    runQueue,
    spilloverQueue,
    duePageQueue,
    importDeadLetterQueue,
    importQueue,
    maxConcurrency,
    runWorkerShare,
    runEnqueueEnvironment,
  };
}

/** Webhooks (docs/api/webhooks.md): the operator's event bus, the delivery queue, the key of the signing secrets. */
export interface WebhookMessaging {
  eventBus: EventBus;
  webhookDeadLetterQueue: Queue;
  webhookQueue: Queue;
  webhookKey: Key;
}

export function webhookMessaging(stack: Stack): WebhookMessaging {
  const eventBus = new EventBus(stack, "EventBus", { eventBusName: `${stack.stackName}-events` });
  const webhookDeadLetterQueue = deadLetterQueueOf(
    stack,
    "WebhookDeadLetterQueue",
    webhookQueueDefinition,
    "This is the dead-letter queue of the webhook delivery queue.",
  );
  const webhookQueue = workQueueOf(stack, "WebhookQueue", webhookQueueDefinition, webhookDeadLetterQueue);
  const webhookKey = new Key(stack, "WebhookSecretKey", {
    description: "Encrypts webhook signing secrets",
    enableKeyRotation: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  return { eventBus, webhookDeadLetterQueue, webhookQueue, webhookKey };
}

/** The job functions and what feeds them: the tick and its rule, the run worker, the import worker, the webhook publisher and delivery worker. */
export interface JobWorkers {
  tick: ProductFunction;
  tickRule: Rule;
  worker: ProductFunction;
  importWorker: ProductFunction;
  publisher: ProductFunction;
  /** The on-failure destination of the stream → publisher mapping. */
  publisherFailureQueue: Queue;
  deliveryWorker: ProductFunction;
}

export function jobWorkers(
  stack: Stack,
  resources: {
    code: FunctionCode;
    environment: Record<string, string>;
    table: TableV2;
    bucket: Bucket;
    queues: JobQueues;
    webhooks: WebhookMessaging;
    grants: ProductGrants;
    travelProviders: TravelProvidersDocument | undefined;
  },
): JobWorkers {
  const { code, environment, table, bucket, grants, travelProviders } = resources;
  const { grant, acknowledgeWildcard, nagArn } = grants;
  const { runQueue, spilloverQueue, duePageQueue, importQueue, maxConcurrency, runWorkerShare, runEnqueueEnvironment } = resources.queues;
  const { webhookQueue } = resources.webhooks;

  const tick = new ProductFunction(stack, "SchedulerTickFunction", {
    code,
    entry: tickEntry,
    description: "Every minute: enqueue the routing schedules that are due",
    environment,
    timeout: tickTimeout,
  });
  for (const each of tickGrants) grant(tick.role as IRole, each);
  for (const [name, value] of Object.entries(runEnqueueEnvironment)) tick.addEnvironment(name, value);
  const tickRule = new Rule(stack, "SchedulerTickRule", {
    schedule: Schedule.rate(Duration.minutes(1)),
    targets: [new LambdaFunction(tick)],
  });
  Validations.of(tickRule).acknowledge({
    id: "Serverless-EventBusDLQ",
    reason:
      "The once-a-minute tick: an invocation EventBridge fails to deliver is covered by the next minute's tick (due schedules stay due), and TickMissing alarms when ticks stop.",
  });

  const worker = new ProductFunction(stack, "RoutingRunFunction", {
    code,
    entry: workerEntry,
    description: "Runs one routing schedule: collect visits, optimize, store the result, dispatch",
    // Context routingThreads caps the search threads (default: the cores the memory size gives; docs/api/routing-runs.md).
    environment: {
      ...environment,
      ...(stack.node.tryGetContext("routingThreads") !== undefined
        ? { ROUTING_THREADS: String(stack.node.tryGetContext("routingThreads")) }
        : {}),
    },
    timeout: Duration.seconds(runWorkerTimeoutSeconds),
    // Context runWorkerMemoryMb: cost against search quality (docs/api/routing-runs.md, "Worker memory").
    memorySize: runWorkerMemoryMb(stack.node.tryGetContext("runWorkerMemoryMb")),
  });
  for (const each of workerGrants) grant(worker.role as IRole, each, "routing-results");
  // The road travel matrix cache (travel-cache/), only when the operator declared a road-network provider.
  const roadProviders = Object.values(travelProviders?.providers ?? {}).filter((provider) => provider.kind !== "greatCircle");
  if (roadProviders.length > 0) {
    const workerRole = worker.role as IRole;
    workerRole.addToPrincipalPolicy(
      new PolicyStatement({
        // Delete: the bounded cache drops the blocks it evicts (shared/travel/matrix-cache.ts).
        actions: ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
        resources: [bucket.arnForObjects(`${objectKinds.travelCache}*`)],
      }),
    );
    acknowledgeWildcard(
      workerRole,
      `${nagArn(workerRole, bucket)}/${objectKinds.travelCache}*`,
      "Only the run worker's road travel matrix caches (travel-cache/, per organization, hub and provider; keys chosen by the code).",
    );
  }
  // Amazon Location's routes matrix, only when the operator declared such a provider (its region, else the stack's).
  const amazonRegions = [
    ...new Set(
      Object.values(travelProviders?.providers ?? {}).flatMap((provider) =>
        provider.kind === "amazonLocation" ? [provider.region ?? stack.region] : [],
      ),
    ),
  ];
  if (amazonRegions.length > 0) {
    worker.role?.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["geo-routes:CalculateRouteMatrix"],
        resources: amazonRegions.map((region) => `arn:${stack.partition}:geo-routes:${region}::provider/default`),
      }),
    );
  }
  for (const [name, value] of Object.entries(runEnqueueEnvironment)) worker.addEnvironment(name, value);
  worker.addEventSource(
    new SqsEventSource(runQueue, { batchSize: runQueueDefinition.batchSize, reportBatchItemFailures: true, maxConcurrency }),
  );
  // The spillover: one organization's share of workers beside those of the run queue, so the worker kept for the others stays free.
  worker.addEventSource(
    new SqsEventSource(spilloverQueue, {
      batchSize: runSpilloverQueueDefinition.batchSize,
      reportBatchItemFailures: true,
      maxConcurrency: spilloverMaxConcurrency(runWorkerShare),
    }),
  );
  // The tick's fan-out pages: their own event source and concurrency, so they never wait behind runs.
  worker.addEventSource(
    new SqsEventSource(duePageQueue, {
      batchSize: duePageQueueDefinition.batchSize,
      reportBatchItemFailures: true,
      maxConcurrency: duePageQueueDefinition.maxConcurrency,
    }),
  );
  // The tick and the worker (a page may fan out further) send pages: SendMessage only.
  for (const sender of [tick, worker])
    sender.addToRolePolicy(new PolicyStatement({ actions: ["sqs:SendMessage"], resources: [duePageQueue.queueArn] }));

  const importWorker = new ProductFunction(stack, "LegacyImportFunction", {
    code,
    entry: importWorkerEntry,
    description: "Runs one step of an import from the earlier version: a page of records, the finish or a rollback page",
    environment,
    timeout: Duration.seconds(importWorkerTimeoutSeconds),
    memorySize: 1024,
  });
  for (const each of importWorkerGrants) grant(importWorker.role as IRole, each);
  importWorker.addEventSource(
    new SqsEventSource(importQueue, {
      batchSize: importQueueDefinition.batchSize,
      reportBatchItemFailures: true,
      maxConcurrency: importQueueDefinition.maxConcurrency,
    }),
  );

  // The stream → events on the bus + one delivery per subscription. Only writes that can mean an
  // event reach the function (results, run claims, data types); a failing batch is retried, then
  // bisected, and its records are skipped after 24 h of retries (the stream's retention).
  const publisher = new ProductFunction(stack, "WebhookPublisherFunction", {
    code,
    entry: publisherEntry,
    description: "Table stream → domain events on the event bus and webhook deliveries on the queue",
    environment,
    timeout: Duration.seconds(60),
  });
  for (const each of publisherGrants) grant(publisher.role as IRole, each);
  // A batch that still fails after its retries is not dropped: its shard and sequence range goes to
  // this queue (14 days, alarmed at once), and `npm run replay -- --aws publisher-failures` republishes
  // it while the stream still holds the records (24 h). docs/operations.md, "What is guaranteed".
  const publisherFailureQueue = deadLetterQueueOf(
    stack,
    "WebhookPublisherFailureQueue",
    { deadLetterRetentionSeconds: 14 * 24 * 3600 },
    "This is the on-failure destination of the stream → webhook publisher mapping.",
  );
  publisher.addEventSource(
    new DynamoEventSource(table, {
      startingPosition: StartingPosition.TRIM_HORIZON,
      batchSize: 100,
      bisectBatchOnError: true,
      retryAttempts: 10,
      onFailure: new SqsDlq(publisherFailureQueue),
      // The entities whose changes mean events: one declaration, also the local poller's filter and the publisher's switch.
      filters: [FilterCriteria.filter(streamFilterPattern)],
    }),
  );
  const deliveryWorker = new ProductFunction(stack, "WebhookDeliveryFunction", {
    code,
    entry: deliveryEntry,
    description: "One webhook delivery attempt per message: signed POST, retry by the schedule, 410 disables",
    environment,
    timeout: Duration.seconds(webhookWorkerTimeoutSeconds),
  });
  for (const each of deliveryWorkerGrants) grant(deliveryWorker.role as IRole, each);
  // No organization holds every delivery worker (a worker waits for the slowest attempt of its batch).
  deliveryWorker.addEnvironment("WEBHOOK_WORKER_SLOTS_PER_TENANT", String(webhookSlotsPerTenant()));
  deliveryWorker.addEventSource(
    new SqsEventSource(webhookQueue, {
      batchSize: webhookQueueDefinition.batchSize,
      reportBatchItemFailures: true,
      maxConcurrency: webhookQueueDefinition.maxConcurrency,
    }),
  );

  for (const sqsWorker of [worker, importWorker, deliveryWorker])
    Validations.of(sqsWorker).acknowledge({
      id: "Serverless-LambdaEventSourceMappingDestination",
      reason:
        "SQS event sources: a message that keeps failing moves to its queue's dead-letter queue through the redrive policy (with an age alarm); an on-failure destination would duplicate it.",
    });
  return { tick, tickRule, worker, importWorker, publisher, publisherFailureQueue, deliveryWorker };
}

/** The job functions' handlers (bundled with the routes' by FunctionCode). */
export const tickEntry = "functions/jobs/scheduler-tick.ts";
export const workerEntry = "functions/jobs/routing-run.ts";
export const importWorkerEntry = "functions/jobs/legacy-import.ts";
export const publisherEntry = "functions/jobs/webhook-publisher.ts";
export const deliveryEntry = "functions/jobs/webhook-delivery.ts";

export const tickTimeout = Duration.seconds(55);

/** What the jobs may touch, in the route table's grant vocabulary. */
export const tickGrants: readonly RouteGrant[] = ["tableWrite", "queueSend"];
/** The worker also sends: a fan-out page of due schedules enqueues its runs. */
export const workerGrants: readonly RouteGrant[] = ["tableWrite", "bucketWrite", "queueSend"];
/** The legacy-import worker: the table, the uploaded exports (read; delete after a `move`), its own queue. */
export const importWorkerGrants: readonly RouteGrant[] = ["tableWrite", "importFileRead", "importFileDelete", "importQueueSend"];

/** The webhook publisher: reads subscriptions (and the tenant's plan), opens delivery items, puts events on the bus, enqueues deliveries. */
export const publisherGrants: readonly RouteGrant[] = ["tableWrite", "eventsPut", "webhookQueueSend"];
/** The delivery worker: the subscription and its delivery items, the secret (decrypt only), its own queue and dead-letter queue. */
export const deliveryWorkerGrants: readonly RouteGrant[] = ["tableWrite", "webhookSecretOpen", "webhookQueueSend"];

/** A queue a worker reads: SSE, TLS only, its definition's visibility and retention, its dead-letter queue after `maxReceiveCount`. */
function workQueueOf(
  scope: Construct,
  id: string,
  definition: { visibilityTimeoutSeconds: number; messageRetentionSeconds: number; maxReceiveCount: number },
  deadLetterQueue: Queue,
): Queue {
  return new Queue(scope, id, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    visibilityTimeout: Duration.seconds(definition.visibilityTimeoutSeconds),
    retentionPeriod: Duration.seconds(definition.messageRetentionSeconds),
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: definition.maxReceiveCount },
  });
}

/** A dead-letter queue: SSE, TLS only, kept `deadLetterRetentionSeconds`; cdk-nag's "has no DLQ of its own" is acknowledged with `reason`. */
function deadLetterQueueOf(scope: Construct, id: string, definition: { deadLetterRetentionSeconds: number }, reason: string): Queue {
  const queue = new Queue(scope, id, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.seconds(definition.deadLetterRetentionSeconds),
  });
  Validations.of(queue).acknowledge({ id: "AwsSolutions-SQS3", reason });
  Validations.of(queue).acknowledge({
    id: "Serverless-SQSRedrivePolicy",
    reason:
      "It is a dead-letter queue itself; a dead-letter queue of a dead-letter queue would only hide failures (its age alarm shows them).",
  });
  return queue;
}
