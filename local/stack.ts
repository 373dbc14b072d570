import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { type AddressInfo, createServer as createNetServer, type Server as NetServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { repositoryRoot } from "#infra/repository-root";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { DynamoDBStreamEvent, ScheduledEvent, SQSBatchResponse, SQSEvent } from "aws-lambda";
import { routes } from "#functions/routes";
import { resetAppConfig } from "#shared/config/env";
import { createGateway, type GatewayOptions } from "#local/gateway";
import { type DynamoDbSemanticsOptions, type DynamoDbSemanticsProxy, startDynamoDbSemanticsProxy } from "#local/dynamodb-semantics";
import { startDynamoDbLocal, startS3Emulator, startSqsEmulator, type RunningEmulator } from "#local/emulators";
import { provisionBucket, provisionQueues, provisionTable } from "#local/provision";
import { startJobThread } from "#local/job-thread";
import {
  duePageQueueDefinition,
  importQueueDefinition,
  importWorkerTimeoutSeconds,
  runWorkerTimeoutSeconds,
  webhookQueueDefinition,
  webhookSlotsPerTenant,
  webhookWorkerTimeoutSeconds,
} from "#shared/queue/definitions";
import { startStreamPoller } from "#local/stream-poller";
import { streamFilterPattern } from "#shared/domain/webhooks/state-changes";

type WebhookWorker = (event: SQSEvent) => Promise<SQSBatchResponse>;

/** Webhook delivery workers running at once locally (on AWS the event source's maximum concurrency). */
export const localWebhookWorkers = 4;
import { type LocalScheduler, startMinuteTicker, startQueuePoller, tickOnce } from "#local/scheduler";
import { localAudience, localIssuer, type SigningKey } from "#local/tokens";
import { authorizerEntry, LocalAuthorizer } from "#local/authorizer";
import { LocalUsagePlans } from "#local/usage-plans";
import { configuredPlans, resetConfiguredPlans } from "#shared/config/tenant-plans";
import { defaultAuthorizerCacheTtlSeconds } from "#shared/domain/tenants/access";
import type { PlanOverrides } from "#shared/domain/tenants/plan-catalog";

/**
 * The whole product on one machine: emulators, provisioning from the shared definitions, the
 * local API gateway and the scheduler. `npm start` and the test suite's globalSetup both call it.
 */
export { repositoryRoot } from "#infra/repository-root";

export interface LocalStackOptions {
  /** 0 picks a free port. */
  port: number;
  /** Keep nothing on disk (tests, `npm start -- --in-memory`). */
  inMemory: boolean;
  /** Where state persists when not in memory (`.local/`). */
  stateDirectory: string;
  signingKey: SigningKey;
  /** Tick the scheduler at every minute boundary and drain the run queue into the worker. */
  runScheduler: boolean;
  /**
   * `manual`: no minute ticker; the caller ticks with `tick(at)` (tests: a scheduled run without
   * waiting for a wall-clock minute). Default `every-minute`.
   */
  ticker?: "every-minute" | "manual";
  /** Publish events from the table's stream and deliver webhooks (default: as runScheduler). */
  runWebhooks?: boolean;
  onBackgroundError?: (error: unknown) => void;
  /**
   * Plans added to (or replacing) the product's (tests inject theirs here); otherwise the document
   * named by TENANT_PLANS_FILE, if any.
   */
  planOverrides?: PlanOverrides;
  /** The travel providers document (shared/domain/travel/providers.ts); otherwise TRAVEL_PROVIDERS_JSON, if set. */
  travelProviders?: unknown;
  /**
   * Services already running elsewhere (LocalStack, or DynamoDB Local / an S3 / an SQS started
   * separately): used instead of starting the embedded emulator, and never stopped by this stack.
   */
  endpoints?: { dynamodb?: string; s3?: string; sqs?: string };
  /**
   * Production DynamoDB semantics (transaction conflicts, throttling, index lag) in front of
   * DynamoDB Local (local/dynamodb-semantics.ts); undefined: DynamoDB Local as it is.
   */
  dynamodbSemantics?: Partial<DynamoDbSemanticsOptions>;
  /** Told of every answer a route gives (local/gateway.ts). */
  observeRouteAnswers?: GatewayOptions["observe"];
}

export interface LocalStack {
  baseUrl: string;
  port: number;
  /** The environment the handlers run with; test workers apply it to reach the same emulators. */
  environment: Record<string, string>;
  /** DynamoDB Local itself, without the semantics proxy (AWS_ENDPOINT_URL_DYNAMODB goes through the proxy when there is one). */
  dynamodbLocalEndpoint: string;
  /** The semantics proxy, when started with `dynamodbSemantics`. */
  dynamodbSemantics?: DynamoDbSemanticsProxy;
  /** Watch mode: the gateway imports each route's handler module again on its next request. */
  reloadHandlers(): void;
  /** Runs one scheduler tick for the minute `at` (the tick's "now" is the event's time), whatever the ticker. */
  tick(at: Date): Promise<void>;
  stop(): Promise<void>;
}

/** Listens on 127.0.0.1:`port`, rejecting (instead of crashing the process with an 'error' event) when it is taken. */
function listen(server: NetServer, port: number): Promise<void> {
  return new Promise<void>((listening, failed) => {
    const refuse = (error: NodeJS.ErrnoException) =>
      failed(error.code === "EADDRINUSE" ? new Error(`port ${port} on 127.0.0.1 is already in use (set PORT to another port)`) : error);
    server.once("error", refuse);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", refuse);
      listening();
    });
  });
}

/** Fails before any emulator is started when the gateway's port is taken (port 0 is always free). */
async function ensurePortFree(port: number): Promise<void> {
  if (port === 0) return;
  const probe = createNetServer();
  await listen(probe, port);
  await new Promise<void>((closed) => probe.close(() => closed()));
}

/** The webhook sealing key of a persistent local state directory: sealed secrets must open after a restart. */
function loadOrCreateSealingKey(stateDirectory: string): string {
  const file = join(stateDirectory, "webhook-sealing-key");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(stateDirectory, { recursive: true });
  const key = randomBytes(32).toString("base64");
  writeFileSync(file, key, { mode: 0o600 });
  return key;
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  await ensurePortFree(options.port);
  const scratch = options.inMemory ? mkdtempSync(join(tmpdir(), "field-ops-")) : undefined;
  const emulators: RunningEmulator[] = [];
  const background: LocalScheduler[] = [];
  let gateway: Server | undefined;
  try {
    const external = (endpoint: string): RunningEmulator => ({ endpoint, stop: async () => undefined });
    const dynamo = options.endpoints?.dynamodb
      ? external(options.endpoints.dynamodb)
      : await startDynamoDbLocal(options.inMemory ? undefined : join(options.stateDirectory, "dynamodb"));
    emulators.push(dynamo);
    let semantics: DynamoDbSemanticsProxy | undefined;
    if (options.dynamodbSemantics) {
      const proxy = await startDynamoDbSemanticsProxy(dynamo.endpoint, options.dynamodbSemantics);
      semantics = proxy;
      emulators.push({ endpoint: proxy.endpoint, stop: () => proxy.stop() });
    }
    const dynamoEndpoint = semantics?.endpoint ?? dynamo.endpoint;
    const s3 = options.endpoints?.s3
      ? external(options.endpoints.s3)
      : await startS3Emulator(scratch ? join(scratch, "s3") : join(options.stateDirectory, "s3"));
    emulators.push(s3);
    const sqsEmulator = options.endpoints?.sqs ? external(options.endpoints.sqs) : await startSqsEmulator();
    emulators.push(sqsEmulator);

    const environment: Record<string, string> = {
      AWS_REGION: "us-east-1",
      // s3rver accepts only these credentials; DynamoDB Local (-sharedDb) and the SQS emulator accept any.
      AWS_ACCESS_KEY_ID: "S3RVER",
      AWS_SECRET_ACCESS_KEY: "S3RVER",
      AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
      DYNAMODB_LOCAL_ENDPOINT: dynamo.endpoint,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      AWS_ENDPOINT_URL_SQS: sqsEmulator.endpoint,
      S3_FORCE_PATH_STYLE: "true",
      TABLE_NAME: "field-operations",
      BUCKET_NAME: "field-operations-files",
      JWT_ISSUER: localIssuer,
      JWT_AUDIENCE: localAudience,
      JWT_JWKS_JSON: JSON.stringify(options.signingKey.jwks),
      APP_TIMEZONE: process.env.APP_TIMEZONE ?? "UTC",
      // GET /usage reads the local gateway's call counters (on AWS the usage plan counts calls).
      USAGE_CALLS_SOURCE: "local-gateway",
      // Development machines run Node 20; the SDK's notice that future releases need Node 22 is noise here.
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      // Powertools: logs as on Lambda (JSON lines); no EMF metrics on stdout and no X-Ray locally.
      POWERTOOLS_SERVICE_NAME: "field-operations-api",
      POWERTOOLS_METRICS_NAMESPACE: "FieldOperations",
      POWERTOOLS_METRICS_DISABLED: "true",
      POWERTOOLS_TRACE_ENABLED: "false",
      // And no X-Ray context tracking (local/process-defaults.ts says why).
      AWS_XRAY_MANUAL_MODE: "true",
      // Unknown organizations are enrolled on the default plan at their first call (the stack's default is off).
      TENANT_AUTO_ENROLL: process.env.TENANT_AUTO_ENROLL ?? "true",
      // Webhook signing secrets are sealed with this key (on AWS: the stack's).
      WEBHOOK_SEALING_KEY: options.inMemory ? randomBytes(32).toString("base64") : loadOrCreateSealingKey(options.stateDirectory),
      WEBHOOKS_ALLOW_LOOPBACK: process.env.WEBHOOKS_ALLOW_LOOPBACK === "true" ? "true" : "false",
      // The delivery workers' fair share, as the stack sets it for its workers (the local ones: localWebhookWorkers).
      WEBHOOK_WORKER_SLOTS_PER_TENANT: String(webhookSlotsPerTenant(localWebhookWorkers)),
      ...(process.env.WEBHOOK_RETRY_SCHEDULE_SECONDS ? { WEBHOOK_RETRY_SCHEDULE_SECONDS: process.env.WEBHOOK_RETRY_SCHEDULE_SECONDS } : {}),
      ...(options.planOverrides ? { TENANT_PLANS_JSON: JSON.stringify(options.planOverrides) } : {}),
      ...(process.env.TENANT_PLANS_FILE && !options.planOverrides ? { TENANT_PLANS_FILE: process.env.TENANT_PLANS_FILE } : {}),
      ...(options.travelProviders !== undefined
        ? { TRAVEL_PROVIDERS_JSON: JSON.stringify(options.travelProviders) }
        : process.env.TRAVEL_PROVIDERS_JSON
          ? { TRAVEL_PROVIDERS_JSON: process.env.TRAVEL_PROVIDERS_JSON }
          : {}),
    };
    Object.assign(process.env, environment);
    const credentials = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };
    const region = "us-east-1";
    await provisionTable(new DynamoDBClient({ region, credentials, endpoint: dynamoEndpoint }), environment.TABLE_NAME as string);
    await provisionBucket(
      new S3Client({ region, credentials, endpoint: s3.endpoint, forcePathStyle: true }),
      environment.BUCKET_NAME as string,
    );
    const sqs = new SQSClient({ region, credentials, endpoint: sqsEmulator.endpoint });
    const queues = await provisionQueues(sqs);
    environment.RUN_QUEUE_URL = queues.runQueueUrl;
    environment.RUN_DEAD_LETTER_QUEUE_URL = queues.deadLetterQueueUrl;
    environment.RUN_SPILLOVER_QUEUE_URL = queues.spilloverQueueUrl;
    environment.DUE_PAGE_QUEUE_URL = queues.duePageQueueUrl;
    environment.IMPORT_QUEUE_URL = queues.importQueueUrl;
    environment.WEBHOOK_QUEUE_URL = queues.webhookQueueUrl;
    environment.WEBHOOK_DEAD_LETTER_QUEUE_URL = queues.webhookDeadLetterQueueUrl;
    Object.assign(process.env, environment);
    resetAppConfig();
    resetConfiguredPlans();

    const cacheTtlSeconds = Number(process.env.AUTHORIZER_CACHE_TTL_SECONDS ?? defaultAuthorizerCacheTtlSeconds);
    const server = createGateway({
      routes,
      basePath: "/v3",
      rootDirectory: repositoryRoot,
      authorizer: new LocalAuthorizer({ modulePath: resolve(repositoryRoot, authorizerEntry), cacheTtlSeconds }),
      usagePlans: new LocalUsagePlans(configuredPlans()),
      ...(options.observeRouteAnswers ? { observe: options.observeRouteAnswers } : {}),
    });
    gateway = server;
    await listen(server, options.port);
    const port = (server.address() as AddressInfo).port;

    const reportError = options.onBackgroundError ?? ((error: unknown) => process.stderr.write(`local scheduler: ${String(error)}\n`));
    const jobs = resolve(repositoryRoot, "functions/jobs");
    const loadTick = async () =>
      ((await import(join(jobs, "scheduler-tick.ts"))) as { handler: (e: ScheduledEvent) => Promise<unknown> }).handler;
    const queueArnOf = async (queueUrl: string) =>
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["QueueArn"] }))).Attributes?.QueueArn as string;
    /** A job in its own thread (off the gateway's event loop) fed by a queue poller, as an SQS event source feeds its Lambda. */
    const workQueueInThread = async (
      queueUrl: string,
      jobFile: string,
      timeoutSeconds: number,
      pollerOptions?: Parameters<typeof startQueuePoller>[5],
    ) => {
      const queueArn = await queueArnOf(queueUrl);
      const worker = startJobThread<SQSEvent, SQSBatchResponse>(join(jobs, jobFile), timeoutSeconds);
      background.push(
        startQueuePoller(sqs, queueUrl, queueArn, async () => worker.invoke, reportError, pollerOptions),
        worker,
      );
    };
    if (options.runScheduler) {
      if (options.ticker !== "manual") background.push(startMinuteTicker(loadTick, reportError));
      // The run worker solves for the run's whole time budget.
      await workQueueInThread(queues.runQueueUrl, "routing-run.ts", runWorkerTimeoutSeconds);
      // The runs beyond their organization's share (RUN_WORKER_SLOTS_PER_TENANT): their own queue and reader, as on AWS.
      await workQueueInThread(queues.spilloverQueueUrl, "routing-run.ts", runWorkerTimeoutSeconds);
      // The tick's fan-out pages: their own queue and event source, into the run worker's code.
      await workQueueInThread(queues.duePageQueueUrl, "routing-run.ts", runWorkerTimeoutSeconds, {
        name: "routing-due-page",
        timeoutSeconds: runWorkerTimeoutSeconds,
        batchSize: duePageQueueDefinition.batchSize,
      });
      // The legacy-import worker (docs/api/legacy-import.md).
      await workQueueInThread(queues.importQueueUrl, "legacy-import.ts", importWorkerTimeoutSeconds, {
        name: "legacy-import",
        timeoutSeconds: importWorkerTimeoutSeconds,
        batchSize: importQueueDefinition.batchSize,
      });
    }
    if (options.runWebhooks ?? options.runScheduler) {
      // Webhooks: the stream poller feeds the publisher, as the stream event source does on AWS, and the
      // queue poller the delivery worker. Both in this process: the in-process event bus is this module's.
      const webhookQueueArn = await queueArnOf(queues.webhookQueueUrl);
      background.push(
        startStreamPoller(
          { endpoint: dynamo.endpoint, region, credentials, tableName: environment.TABLE_NAME as string },
          async () =>
            ((await import(join(jobs, "webhook-publisher.ts"))) as { handler: (event: DynamoDBStreamEvent) => Promise<unknown> }).handler,
          reportError,
          streamFilterPattern,
        ),
        startQueuePoller(
          sqs,
          queues.webhookQueueUrl,
          webhookQueueArn,
          async () => ((await import(join(jobs, "webhook-delivery.ts"))) as { handler: WebhookWorker }).handler,
          reportError,
          {
            name: "webhook-delivery",
            timeoutSeconds: webhookWorkerTimeoutSeconds,
            batchSize: webhookQueueDefinition.batchSize,
            concurrency: localWebhookWorkers,
          },
        ),
      );
    }

    return {
      baseUrl: `http://127.0.0.1:${port}/v3`,
      port,
      environment,
      dynamodbLocalEndpoint: dynamo.endpoint,
      dynamodbSemantics: semantics,
      reloadHandlers: () => server.forgetHandlers(),
      tick: (at: Date) => tickOnce(loadTick, at),
      stop: async () => {
        await Promise.all(background.map((job) => job.stop()));
        await closeGateway(server);
        await Promise.all(emulators.map((emulator) => emulator.stop()));
        if (scratch) rmSync(scratch, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await Promise.all(background.map((job) => job.stop()));
    if (gateway?.listening) await closeGateway(gateway);
    await Promise.all(emulators.map((emulator) => emulator.stop().catch(() => undefined)));
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    throw error;
  }
}

function closeGateway(gateway: Server): Promise<void> {
  return new Promise<void>((closed) => {
    gateway.closeAllConnections();
    gateway.close(() => closed());
  });
}
