import {
  type CfnElement,
  CfnOutput,
  CfnResource,
  CfnRule,
  Duration,
  Fn,
  Lazy,
  Names,
  RemovalPolicy,
  Size,
  Stack,
  type StackProps,
  Validations,
} from "aws-cdk-lib";
import {
  AccessLogFormat,
  ApiKey,
  ApiKeySourceType,
  Cors,
  type CorsOptions,
  Deployment,
  IdentitySource,
  type IResource,
  LogGroupLogDestination,
  MethodLoggingLevel,
  Period,
  RequestAuthorizer,
  Resource,
  ResponseType,
  RestApi,
  Stage,
  UsagePlan,
} from "aws-cdk-lib/aws-apigateway";
import { type IRole, PolicyStatement } from "aws-cdk-lib/aws-iam";
import { AttributeType, Billing, StreamViewType, TableV2 } from "aws-cdk-lib/aws-dynamodb";
import { EventBus, Rule, Schedule } from "aws-cdk-lib/aws-events";
import { Key } from "aws-cdk-lib/aws-kms";
import { FilterCriteria, StartingPosition } from "aws-cdk-lib/aws-lambda";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { DynamoEventSource, SqsDlq, SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { FilterPattern, LogGroup, MetricFilter, RetentionDays } from "aws-cdk-lib/aws-logs";
import { apiSamplingRule, productLogGroupProps } from "#infra/constructs/observability-costs";
import { BlockPublicAccess, Bucket, BucketEncryption, type LifecycleRule, ObjectOwnership, StorageClass } from "aws-cdk-lib/aws-s3";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData } from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import { functionGroupAlarms, planRejectedAlarm } from "#infra/constructs/alarms";
import { binaryMediaTypes, type RouteDefinition, type RouteGrant, routeGrantActions } from "#shared/http/route";
import {
  deadLetterOldestMessageAlarmSeconds,
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
import { objectKeys, objectKinds } from "#shared/store/keys";
import { streamFilterPattern } from "#shared/domain/webhooks/state-changes";
import { tableDefinition } from "#shared/store/table-definition";
import { FunctionCode, ProductFunction } from "#infra/constructs/api-function";
import { apiArea, parentPath, pathSegments, rootOwner } from "#infra/api-paths";
import { currentPathOwners } from "#infra/api-path-owners";
import { ApiAreaStack } from "#infra/stacks/api-area-stack";
import { type PlanCatalog, usagePlanName } from "#shared/domain/tenants/plan-catalog";
import type { TravelProvidersDocument } from "#shared/domain/travel/providers";
import { gatewayAnswers, gatewayBearerChallenge, gatewayRetryAfterSeconds } from "#shared/http/gateway-responses";
import { operationsDashboard } from "#infra/constructs/dashboard";
import { tenantSlotCap } from "#shared/domain/fairness/worker-slots";
import { placeholderJwt } from "#infra/placeholders";
import { CfnWebACLAssociation } from "aws-cdk-lib/aws-wafv2";
import { productMetricNamespace } from "#infra/constructs/metric-namespace";
import type { JwtIssuer } from "#shared/config/jwt-issuers";
import { authorizerFailureMessage } from "#shared/http/authorizer-failure";
import {
  ApiGatewayCloudWatchRole,
  acknowledgeAccountLoggingPolicy,
  apiGatewayCloudWatchRoleEntry,
} from "#infra/constructs/api-gateway-cloudwatch-role";

/** Tenancy at the gateway (docs/operations.md, "Tenants and plans"). */
export interface TenancyProps {
  /** The plans in force (product plans plus the operator's document); one usage plan each. */
  plans: PlanCatalog;
  /**
   * The operator's plan document, fixed at synth time and bundled into every function (a constant in
   * the code, infra/bundling.ts), so the authorizer, the run quota and cap and imports enforce the
   * same plans as the usage plans; never an environment variable (4 KB for all of them).
   */
  planOverrides: unknown;
  /** Enroll unknown organizations on the default plan (context `tenantAutoEnroll`, default false); they share one key. */
  autoEnroll: boolean;
  /** Authorizer results are cached per token this long (context `authorizerCacheTtlSeconds`, default 300). */
  authorizerCacheTtlSeconds: number;
}

export interface FieldOperationsStackProps extends StackProps {
  routes: readonly RouteDefinition[];
  repositoryRoot: string;
  /** Token verification: any OIDC/Cognito issuer that signs RS256 JWTs with the claims of docs/api/README.md, Authentication. */
  jwtIssuers: readonly JwtIssuer[];
  appTimeZone: string;
  /** Origins browsers may call the API from (`*` for any); context `corsAllowedOrigins`, comma-separated. */
  corsAllowedOrigins: readonly string[];
  /** Deploy source maps with the bundles and turn on `--enable-source-maps` (context `sourceMaps=true`). */
  sourceMaps?: boolean;
  /** E-mail address the alarm topic notifies (context `alarmEmail`); no subscription when unset. */
  alarmEmail?: string;
  tenancy: TenancyProps;
  /**
   * Road-network travel providers (context `travelProviders`, a file): handed to the functions as
   * TRAVEL_PROVIDERS_JSON; an `amazonLocation` one also grants the run worker `geo-routes:CalculateRouteMatrix`.
   */
  travelProviders?: TravelProvidersDocument;
  /**
   * The upgrade step for installs that created `ApiAccount`/`ApiCloudWatchRole` (context
   * `apiGatewayAccountRole=true`): keeps both under their logical ids, retained, so the next deploy
   * without the flag drops them from the stack without deleting the role API Gateway logs as. New
   * installs never need it: the ApiGatewayCloudWatchRole custom resource sets a role only where none is set.
   */
  apiGatewayAccountRole?: boolean;
  /** Execution logging (ERROR) with the account's existing CloudWatch role (context `apiGatewayExecutionLogs=true`). */
  apiGatewayExecutionLogs?: boolean;
  /**
   * A regional AWS WAF web ACL the operator manages (context `webAclArn`), associated with the stage.
   * The ACL stays outside the stack: its rules and their cost are the account's choice (docs/operations.md).
   */
  webAclArn?: string;
}

const errorBody = (status: number, message: string, failedCode: string) => ({
  "application/json": JSON.stringify({ status: false, message, failedCode, statusCode: status }),
});

/**
 * The product: REST API (stage v3) with one function per route of the route table, the single
 * DynamoDB table, the private certificate bucket, and the once-a-minute scheduler tick fanning
 * routing runs out through SQS to the run worker. Each API area's functions and methods sit in a
 * nested stack (ApiAreaStack), which keeps every template far below CloudFormation's 500 resources.
 */
export class FieldOperationsStack extends Stack {
  /** One nested stack per API area (functions/http/<area>/): functions, methods, their roles and logs. */
  readonly areaStacks: ApiAreaStack[];
  /** The root stack's alarms (jobs, queue, API); each area stack holds its functions' alarms. */
  readonly alarms: Alarm[];
  /** One usage plan per plan of the catalog, by plan name. */
  readonly usagePlans = new Map<string, UsagePlan>();
  readonly api: RestApi;
  readonly authorizer: RequestAuthorizer;

  constructor(scope: Construct, id: string, props: FieldOperationsStackProps) {
    super(scope, id, props);

    const table = new TableV2(this, "Table", {
      partitionKey: { name: tableDefinition.partitionKey, type: AttributeType.STRING },
      sortKey: { name: tableDefinition.sortKey, type: AttributeType.STRING },
      globalSecondaryIndexes: tableDefinition.globalSecondaryIndexes.map((index) => ({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
      })),
      timeToLiveAttribute: tableDefinition.timeToLiveAttribute,
      // The webhook publisher reads domain events from the committed writes themselves.
      dynamoStream: StreamViewType[tableDefinition.streamViewType],
      billing: Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const accessLogBucket = new Bucket(this, "AccessLogBucket", {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ expiration: Duration.days(365) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(accessLogBucket).acknowledge({
      id: "AwsSolutions-S1",
      reason: "This bucket receives the file bucket's access logs; logging it again would recurse.",
    });

    const bucket = new Bucket(this, "FileBucket", {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      serverAccessLogsBucket: accessLogBucket,
      serverAccessLogsPrefix: "file-bucket/",
      // Travel matrix caches are rewritten by every run that adds points: keep no old versions, and drop
      // a cache no run has rewritten for its TTL (its entries would all be asked again anyway).
      lifecycleRules: [
        ...fileLifecycleRules(this),
        {
          id: "ExpireTravelMatrixCaches",
          prefix: objectKinds.travelCache,
          noncurrentVersionExpiration: Duration.days(1),
          expiration: Duration.days(Math.ceil(props.travelProviders?.cacheTtlDays ?? 30)),
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const deadLetterQueue = deadLetterQueueOf(
      this,
      "RunDeadLetterQueue",
      runQueueDefinition,
      "This is the dead-letter queue of the run queue.",
    );
    const runQueue = workQueueOf(this, "RunQueue", runQueueDefinition, deadLetterQueue);

    // At most this many workers at once (context runWorkerMaxConcurrency), so runs cannot take the API's Lambda concurrency.
    const maxConcurrency = Number(this.node.tryGetContext("runWorkerMaxConcurrency") ?? defaultRunWorkerMaxConcurrency);
    // No organization holds every worker: a run of another always finds one (shared/domain/fairness/worker-slots.ts).
    const runWorkerShare = tenantSlotCap(maxConcurrency);
    // An organization's runs beyond its share wait here, read by that share's workers only (runSpilloverQueueDefinition).
    const spilloverQueue = workQueueOf(this, "RunSpilloverQueue", runSpilloverQueueDefinition, deadLetterQueue);
    // What the run enqueuers (the tick, the worker's due pages, POST /routing/result) need to route a run by its organization's share.
    const runEnqueueEnvironment = { RUN_SPILLOVER_QUEUE_URL: spilloverQueue.queueUrl, RUN_WORKER_SLOTS_PER_TENANT: String(runWorkerShare) };

    const duePageQueue = workQueueOf(this, "DuePageQueue", duePageQueueDefinition, deadLetterQueue);

    const importDeadLetterQueue = deadLetterQueueOf(
      this,
      "ImportDeadLetterQueue",
      importQueueDefinition,
      "This is the dead-letter queue of the legacy-import queue.",
    );
    const importQueue = workQueueOf(this, "ImportQueue", importQueueDefinition, importDeadLetterQueue);

    // The JWT settings as parameters whose defaults are the context values: a Rule refuses the
    // placeholder values at deploy time, before CloudFormation creates anything, while synth needs no account.
    refusePlaceholderIssuers(this, props.jwtIssuers);
    // Webhooks (docs/api/webhooks.md): the operator's event bus, the delivery queue, the key of the signing secrets.
    const eventBus = new EventBus(this, "EventBus", { eventBusName: `${this.stackName}-events` });
    const webhookDeadLetterQueue = deadLetterQueueOf(
      this,
      "WebhookDeadLetterQueue",
      webhookQueueDefinition,
      "This is the dead-letter queue of the webhook delivery queue.",
    );
    const webhookQueue = workQueueOf(this, "WebhookQueue", webhookQueueDefinition, webhookDeadLetterQueue);
    const webhookKey = new Key(this, "WebhookSecretKey", {
      description: "Encrypts webhook signing secrets",
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const environment = {
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
      POWERTOOLS_METRICS_NAMESPACE: productMetricNamespace(this),
      POWERTOOLS_LOGGER_SAMPLE_RATE: "0.01",
      ...(this.node.tryGetContext("maxActiveRunsPerOrg") !== undefined
        ? { MAX_ACTIVE_RUNS_PER_ORG: String(this.node.tryGetContext("maxActiveRunsPerOrg")) }
        : {}),
      ...(props.travelProviders ? { TRAVEL_PROVIDERS_JSON: JSON.stringify(props.travelProviders) } : {}),
    };

    // Every function's bundle, built in one esbuild run before any function needs its code.
    const code = new FunctionCode(
      this,
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
      {
        repositoryRoot: props.repositoryRoot,
        sourceMaps: props.sourceMaps ?? false,
        planOverrides: props.tenancy.planOverrides,
      },
    );

    const accessLogs = new LogGroup(this, "ApiAccessLogs", productLogGroupProps(this, "access"));
    const accountRole = props.apiGatewayAccountRole ?? false;
    const executionLogs = accountRole || (props.apiGatewayExecutionLogs ?? false);
    // Every alarm notifies this topic; context alarmEmail subscribes an address to it.
    const alarmTopic = new Topic(this, "AlarmTopic", { displayName: "Field Operations API alarms", enforceSSL: true });
    Validations.of(alarmTopic).acknowledge({
      id: "AwsSolutions-SNS2",
      reason:
        "Alarm notifications carry no customer data, and CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS key.",
    });
    if (props.alarmEmail) {
      const subscription = alarmTopic.addSubscription(new EmailSubscription(props.alarmEmail));
      Validations.of(subscription).acknowledge({
        id: "Serverless-SNSRedrivePolicy",
        reason: "An undelivered alarm e-mail has nothing to redrive, and the alarm stays in ALARM on the dashboard.",
      });
    }

    const anyOrigin = props.corsAllowedOrigins.includes("*");
    const cors: CorsOptions = {
      allowOrigins: anyOrigin ? Cors.ALL_ORIGINS : [...props.corsAllowedOrigins],
      allowHeaders: ["Authorization", "Content-Type", "Idempotency-Key", "If-Match"],
    };
    // API Gateway's own error answers carry the CORS header too, or a browser sees only a network
    // error. A gateway response cannot pick one origin of a list: with several, it echoes the
    // request's Origin (these bodies are fixed error messages, never data).
    const singleOrigin = anyOrigin ? "*" : props.corsAllowedOrigins.length === 1 ? props.corsAllowedOrigins[0] : undefined;
    const gatewayCorsHeaders: Record<string, string> = singleOrigin
      ? { "Access-Control-Allow-Origin": `'${singleOrigin}'` }
      : { "Access-Control-Allow-Origin": "method.request.header.Origin", Vary: "'Origin'" };
    // Every answer, the gateway's own included, tells browsers not to guess its content type.
    gatewayCorsHeaders["X-Content-Type-Options"] = "'nosniff'";
    // The deployment and stage are created below, after the area stacks that hold the methods.
    this.api = new RestApi(this, "Api", {
      // Per stack, so two stacks in one account keep apart in API Gateway's metrics (ApiName) and consoles;
      // the default stack keeps the name earlier installs have (and their metrics' history).
      restApiName: this.stackName === "FieldOperations" ? "field-operations-api" : `${this.stackName}-api`,
      description: "Field Operations Management API v3",
      binaryMediaTypes: [...binaryMediaTypes],
      // The account-wide setting only on request (apiGatewayAccountRole); never deleted with this stack.
      cloudWatchRole: accountRole,
      ...(accountRole ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN } : {}),
      deploy: false,
      defaultCorsPreflightOptions: cors,
      // gzip/deflate for clients that ask (Accept-Encoding) once a body reaches 1 KiB.
      minCompressionSize: Size.kibibytes(1),
      // The tenant authorizer names the usage-plan key of each call (usageIdentifierKey); clients never send one.
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
    });
    const api = this.api;
    const earlierAccountRole = api.node.tryFindChild("CloudWatchRole");
    if (earlierAccountRole) acknowledgeAccountLoggingPolicy(earlierAccountRole);
    Validations.of(api).acknowledge({
      id: "AwsSolutions-APIG2",
      reason:
        "Requests are validated by the zod schemas in each function, which also generate the OpenAPI document; API Gateway models would duplicate them.",
    });
    // API Gateway's own answers (unknown route, oversize body, throttling) in the product's error shape.
    const responseHeaders = gatewayCorsHeaders;
    api.addGatewayResponse("UnknownRoute", {
      type: ResponseType.MISSING_AUTHENTICATION_TOKEN,
      statusCode: "404",
      responseHeaders,
      templates: errorBody(404, "Route not found", "sys-404"),
    });
    api.addGatewayResponse("TooLarge", {
      type: ResponseType.REQUEST_TOO_LARGE,
      statusCode: "413",
      responseHeaders,
      templates: errorBody(413, "Request body is too large.", "sys-413"),
    });
    api.addGatewayResponse("Throttled", {
      type: ResponseType.THROTTLED,
      statusCode: "429",
      responseHeaders: { ...responseHeaders, "Retry-After": `'${gatewayRetryAfterSeconds.throttled}'` },
      templates: errorBody(429, "Too many requests.", "sys-429"),
    });
    // The tenant authorizer's answers (shared/http/gateway-responses.ts; the local gateway gives the same).
    const answer = (name: keyof typeof gatewayAnswers) => gatewayAnswers[name];
    api.addGatewayResponse("Unauthorized", {
      type: ResponseType.UNAUTHORIZED,
      statusCode: "401",
      responseHeaders: { ...responseHeaders, "WWW-Authenticate": `'${gatewayBearerChallenge}'` },
      templates: errorBody(401, answer("unauthorized").message, answer("unauthorized").failedCode),
    });
    // The authorizer's Deny carries its reason (not enrolled, suspended) in its context.
    api.addGatewayResponse("AccessDenied", {
      type: ResponseType.ACCESS_DENIED,
      statusCode: "403",
      responseHeaders,
      templates: { "application/json": contextTemplate(403, "message", "failedCode", answer("accessDenied").failedCode) },
    });
    // Which quota and when it resets: the authorizer's context of the tenant's plan.
    api.addGatewayResponse("QuotaExceeded", {
      type: ResponseType.QUOTA_EXCEEDED,
      statusCode: "429",
      responseHeaders: { ...responseHeaders, "Retry-After": `'${gatewayRetryAfterSeconds.quotaExceeded}'` },
      templates: { "application/json": contextTemplate(429, "quotaExceededMessage", undefined, answer("quotaExceeded").failedCode) },
    });
    api.addGatewayResponse("InvalidApiKey", {
      type: ResponseType.INVALID_API_KEY,
      statusCode: "403",
      responseHeaders,
      templates: errorBody(403, answer("invalidApiKey").message, answer("invalidApiKey").failedCode),
    });

    const tenancy = props.tenancy;
    const authorizerFunction = new ProductFunction(this, "TenantAuthorizerFunction", {
      code,
      entry: authorizerEntry,
      description: "Tenant authorizer: verifies the bearer JWT, reads the tenant, names its usage-plan key",
      environment: {
        TABLE_NAME: environment.TABLE_NAME,
        // Only the authorizer verifies tokens; the routes read the caller from its context.
        JWT_ISSUERS_JSON: JSON.stringify(props.jwtIssuers),
        POWERTOOLS_SERVICE_NAME: environment.POWERTOOLS_SERVICE_NAME,
        TENANT_AUTO_ENROLL: String(tenancy.autoEnroll),
        TENANT_AUTO_ENROLL_API_KEY: autoEnrollKeyValue(this),
      },
      timeout: Duration.seconds(10),
      memorySize: 256,
    });
    // The authorizer's own failures (shared/http/authenticate.ts authorizerFailureMessage), apart from bad tokens.
    const authorizerFailures = new MetricFilter(this, "AuthorizerFailureMetricFilter", {
      logGroup: authorizerFunction.logGroup,
      filterPattern: FilterPattern.stringValue("$.message", "=", authorizerFailureMessage),
      metricNamespace: productMetricNamespace(this),
      metricName: "AuthorizerFailures",
      metricValue: "1",
    });
    // One GetItem: the tenant record. Nothing else.
    authorizerFunction.addToRolePolicy(new PolicyStatement({ actions: ["dynamodb:GetItem"], resources: [table.tableArn] }));
    this.authorizer = new RequestAuthorizer(this, "TenantAuthorizer", {
      handler: authorizerFunction,
      identitySources: [IdentitySource.header("Authorization")],
      resultsCacheTtl: Duration.seconds(tenancy.authorizerCacheTtlSeconds),
    });
    const authorizer = this.authorizer;
    api.addGatewayResponse("Default5xx", {
      type: ResponseType.DEFAULT_5XX,
      responseHeaders,
      templates: errorBody(500, "Internal server error, please contact support.", "sys-500"),
    });
    // Every other gateway 4xx (401/403 from the gateway included: they fall back to the default) keeps its body and gains the header.
    api.addGatewayResponse("Default4xx", { type: ResponseType.DEFAULT_4XX, responseHeaders });

    const deployment = new Deployment(this, "Deployment", { api, description: "Field Operations Management API v3" });
    deployment.node.addDependency(authorizer);
    // A deployment is a snapshot of the API's methods, resources, authorizers and gateway responses;
    // a change to any of them only reaches the stage through a new deployment. CDK hashes only the
    // RestApi itself (and only for latestDeployment), and the methods live in nested stacks: so the
    // hand-made deployment's logical id hashes every such resource of the root and area templates,
    // as rendered (deploymentSnapshot). Throttles and usage plans update the stage in place.
    deployment.addToLogicalId(Lazy.any({ produce: () => deploymentSnapshot(this) }));
    const stageName = "v3";
    // API Gateway writes execution logs to this group by name; created here so it has a retention period.
    const executionLogGroup = new LogGroup(this, "ApiExecutionLogs", {
      logGroupName: `API-Gateway-Execution-Logs_${api.restApiId}/${stageName}`,
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // The stage limit guards the whole API; each tenant's own limit is its usage plan's, so the stage must admit the fastest plan.
    const stage = new Stage(this, "Stage", {
      deployment,
      stageName,
      throttlingRateLimit: Math.max(100, ...tenancy.plans.plans.map((plan) => plan.rate)),
      throttlingBurstLimit: Math.max(200, ...tenancy.plans.plans.map((plan) => plan.burst)),
      // Execution logging needs the account's CloudWatch role (apiGatewayAccountRole / apiGatewayExecutionLogs).
      loggingLevel: executionLogs ? MethodLoggingLevel.ERROR : MethodLoggingLevel.OFF,
      accessLogDestination: new LogGroupLogDestination(accessLogs),
      accessLogFormat: accessLogFormat(),
      tracingEnabled: true,
      // The public routes (no token, so no usage plan) are limited per method, below the stage limit.
      methodOptions: publicMethodThrottles(props.routes),
    });
    stage.node.addDependency(executionLogGroup);
    if (!props.webAclArn)
      Validations.of(stage).acknowledge({
        id: "AwsSolutions-APIG3",
        reason:
          "WAF has its own cost and rules: deploy with -c webAclArn=<a regional web ACL> to associate one with the stage (docs/operations.md, Deploy).",
      });
    if (!executionLogs)
      Validations.of(stage).acknowledge({
        id: "AwsSolutions-APIG6",
        reason:
          "Execution logs are opt-in (context apiGatewayExecutionLogs) for their cost; the access log records every request with its error.",
      });
    // Access logging needs API Gateway's account-level CloudWatch role: set (only where the region has none) before the stage.
    const cloudWatchRole = new ApiGatewayCloudWatchRole(this, "ApiGatewayCloudWatchRole", { code });
    stage.node.addDependency(cloudWatchRole.resource);
    // An install that still holds the account setting of earlier versions (apiGatewayAccountRole): read it after that is in place.
    const legacyAccount = api.node.tryFindChild("Account");
    if (legacyAccount) cloudWatchRole.resource.node.addDependency(legacyAccount);
    // Traces of API routes: 1/s + 1 % by default (infra/constructs/observability-costs.ts).
    apiSamplingRule(this, api.restApiName, stageName);
    api.deploymentStage = stage;
    if (props.webAclArn) {
      new CfnWebACLAssociation(this, "ApiWebAclAssociation", { resourceArn: stage.stageArn, webAclArn: props.webAclArn });
    }

    // One usage plan per plan: the gateway throttles and counts each tenant's calls under its key.
    for (const plan of tenancy.plans.plans) {
      this.usagePlans.set(
        plan.name,
        new UsagePlan(this, `UsagePlan${pascalCase(plan.name)}`, {
          name: usagePlanName(this.stackName, plan.name),
          description: plan.description,
          throttle: { rateLimit: plan.rate, burstLimit: plan.burst },
          ...(plan.callQuota
            ? { quota: { limit: plan.callQuota.limit, period: plan.callQuota.period === "day" ? Period.DAY : Period.MONTH } }
            : {}),
          apiStages: [{ api, stage }],
        }),
      );
    }
    if (tenancy.autoEnroll) {
      // Organizations without a tenant record share this key on the default plan (enroll them to give each its own limits).
      const poolKey = new ApiKey(this, "AutoEnrollApiKey", {
        value: autoEnrollKeyValue(this),
        description: "Organizations auto-enrolled on the default plan",
      });
      this.usagePlans.get(tenancy.plans.defaultPlan.name)?.addApiKey(poolKey);
    }

    // cdk-nag names a resource by its token: `<Table….Arn>` in this stack, the parameter CDK passes into a nested one.
    const nagArn = (role: IRole, construct: TableV2 | Bucket) => {
      const element = construct.node.defaultChild as CfnElement;
      return Stack.of(role) === this ? `<${this.getLogicalId(element)}.Arn>` : `<referenceto${Names.uniqueId(element)}Arn>`;
    };
    // A wildcard resource is acknowledged on the role that holds it, for that resource only.
    const acknowledgeWildcard = (role: IRole, resource: string, reason: string) =>
      Validations.of(role).acknowledge({ id: `AwsSolutions::AwsSolutions-IAM5[Resource::${resource}]`, reason });

    // Explicit actions per grant (routeGrantActions), never CDK's grantRead/WriteData groups.
    // Bucket grants reach one kind of object (objectKinds): `area` names the API area (or job) whose objects they are.
    const grant = (role: IRole, grant: RouteGrant, area?: string) => {
      const actions = routeGrantActions[grant];
      const onTable = actions.filter((action) => action.startsWith("dynamodb:"));
      if (onTable.length > 0) {
        role.addToPrincipalPolicy(new PolicyStatement({ actions: onTable, resources: [table.tableArn] }));
        // Only queries reach the secondary indexes (by hub, due index).
        if (onTable.includes("dynamodb:Query")) {
          role.addToPrincipalPolicy(new PolicyStatement({ actions: ["dynamodb:Query"], resources: [`${table.tableArn}/index/*`] }));
          acknowledgeWildcard(
            role,
            `${nagArn(role, table)}/index/*`,
            "Only dynamodb:Query, on this table's own secondary indexes (lists by hub, the due index).",
          );
        }
      }
      // The import grants reach only the uploaded exports and the import queue.
      const isImportGrant = grant.startsWith("import");
      const onBucket = actions.filter((action) => action.startsWith("s3:"));
      if (onBucket.length > 0) {
        if (grant.startsWith("proof")) {
          // The proof grants reach only proofs of delivery; ListBucket only for keys under proofs/.
          const onObjects = onBucket.filter((action) => action !== "s3:ListBucket");
          role.addToPrincipalPolicy(
            new PolicyStatement({ actions: onObjects, resources: [bucket.arnForObjects(objectKeys.visitProofPattern)] }),
          );
          acknowledgeWildcard(
            role,
            `${nagArn(role, bucket)}/${objectKeys.visitProofPattern}`,
            "Only the proofs of delivery of every organization (the proof routes' objects); keys are derived by the code from the organization, the visit and the proof id.",
          );
          if (onBucket.includes("s3:ListBucket"))
            role.addToPrincipalPolicy(
              new PolicyStatement({
                actions: ["s3:ListBucket"],
                resources: [bucket.bucketArn],
                conditions: { StringLike: { "s3:prefix": [objectKeys.visitProofPattern] } },
              }),
            );
        } else if (isImportGrant) {
          const onObjects = onBucket.filter((action) => action !== "s3:ListBucket");
          if (onObjects.length > 0) {
            role.addToPrincipalPolicy(
              new PolicyStatement({ actions: onObjects, resources: [bucket.arnForObjects(objectKeys.legacyExportPattern)] }),
            );
            acknowledgeWildcard(
              role,
              `${nagArn(role, bucket)}/${objectKeys.legacyExportPattern}`,
              "Only the uploaded legacy exports of every organization (the import functions' objects); keys are chosen by the code.",
            );
          }
          // A bucket-level action: its resource is the bucket (a condition on s3:prefix would not reach the 404-or-403 choice of an object read).
          if (onBucket.includes("s3:ListBucket"))
            role.addToPrincipalPolicy(new PolicyStatement({ actions: ["s3:ListBucket"], resources: [bucket.bucketArn] }));
        } else {
          const kind = bucketKindOfArea[area ?? ""];
          if (!kind)
            throw new Error(`Bucket grant ${grant} for ${area ?? "a role"} without an object kind: add the area to bucketKindOfArea`);
          role.addToPrincipalPolicy(new PolicyStatement({ actions: onBucket, resources: [bucket.arnForObjects(`${kind.prefix}*`)] }));
          acknowledgeWildcard(
            role,
            `${nagArn(role, bucket)}/${kind.prefix}*`,
            `Only the ${kind.prefix} objects of every organization (what ${area} stores); keys are per organization and chosen by the code.`,
          );
          // Objects of the earlier layout (`org/<o>/<kind>/…`) are still read (and certificates deleted) where they are.
          const legacyActions = onBucket.filter((action) => kind.legacyActions.includes(action));
          if (legacyActions.length > 0) {
            role.addToPrincipalPolicy(
              new PolicyStatement({ actions: legacyActions, resources: [bucket.arnForObjects(kind.legacyPattern)] }),
            );
            acknowledgeWildcard(
              role,
              `${nagArn(role, bucket)}/${kind.legacyPattern}`,
              `Only ${area}'s objects of the earlier key layout, read (certificates also deleted) where they are; nothing new is written there.`,
            );
          }
        }
      }
      const onQueue = actions.filter((action) => action.startsWith("sqs:"));
      const queueArns =
        grant === "webhookQueueSend"
          ? [webhookQueue.queueArn, webhookDeadLetterQueue.queueArn]
          : isImportGrant
            ? [importQueue.queueArn]
            : [runQueue.queueArn, spilloverQueue.queueArn];
      if (onQueue.length > 0) role.addToPrincipalPolicy(new PolicyStatement({ actions: onQueue, resources: queueArns }));
      const onKey = actions.filter((action) => action.startsWith("kms:"));
      if (onKey.length > 0) role.addToPrincipalPolicy(new PolicyStatement({ actions: onKey, resources: [webhookKey.keyArn] }));
      const onBus = actions.filter((action) => action.startsWith("events:"));
      if (onBus.length > 0) role.addToPrincipalPolicy(new PolicyStatement({ actions: onBus, resources: [eventBus.eventBusArn] }));
      // Reads of usage only: the list of usage plans (GetUsagePlans by key) and usage plans' usage (GetUsage).
      // Not each usage plan's own ARN: a usage plan depends on the stage, the stage's deployment on the area stacks (a cycle).
      const onApiGateway = actions.filter((action) => action.startsWith("apigateway:"));
      if (onApiGateway.length > 0) {
        role.addToPrincipalPolicy(
          new PolicyStatement({
            actions: onApiGateway,
            resources: [
              `arn:${this.partition}:apigateway:${this.region}::/usageplans`,
              `arn:${this.partition}:apigateway:${this.region}::/usageplans/*/usage`,
            ],
          }),
        );
        acknowledgeWildcard(
          role,
          "arn:<AWS::Partition>:apigateway:<AWS::Region>::/usageplans/*/usage",
          "Only apigateway:GET of usage plans' usage (GetUsage), for GET /v3/usage: the caller's own key is chosen by the code; naming each usage plan would make the API area stacks depend on the stage (a cycle).",
        );
      }
    };

    const areaOf = (route: RouteDefinition) => apiArea(route.handler);
    const areas = new Map<string, RouteDefinition[]>();
    for (const route of props.routes) areas.set(areaOf(route), [...(areas.get(areaOf(route)) ?? []), route]);
    const areaStackOf = new Map<string, ApiAreaStack>();
    // Path resources, each created once by the stack that owns it (pinned: infra/api-path-owners.json).
    const owners = currentPathOwners(props.routes);
    const pathResources = new Map<string, IResource>([["/", api.root]]);
    const resourceFor = (path: string): IResource => {
      const existing = pathResources.get(path);
      if (existing) return existing;
      const owner = owners.get(path);
      if (owner === undefined) throw new Error(`No owner for the API path ${path}`);
      const parentOwner = owners.get(parentPath(path)) ?? rootOwner;
      const parent = resourceFor(parentPath(path));
      const pathPart = pathSegments(path).at(-1) as string;
      // Under a parent of the same stack: its child (the parent's CORS preflight is inherited). Else
      // a resource of the owner's stack naming the other stack's parent (a cross-stack reference).
      const ownerStack = owner === rootOwner ? this : areaStackOf.get(owner);
      if (!ownerStack) throw new Error(`API path ${path}: its owner ${owner} has no stack`);
      const resource =
        owner === parentOwner
          ? parent.addResource(pathPart)
          : new Resource(ownerStack, `Path${path}`, { parent, pathPart, defaultCorsPreflightOptions: cors });
      pathResources.set(path, resource);
      return resource;
    };
    // The root stack's paths first, as they always were: the API's own children.
    for (const [path, owner] of owners) if (owner === rootOwner) resourceFor(path);
    this.areaStacks = [...areas].map(([area, routes]) => {
      const areaStack = new ApiAreaStack(this, `${pascalCase(area)}Api`, {
        description: `Field Operations API: ${area} routes`,
        area,
        routes,
        code,
        api,
        stageName,
        resourceFor,
        environment,
        runEnqueueEnvironment,
        grant,
        alarmTopic,
        authorizer,
      });
      areaStackOf.set(area, areaStack);
      deployment.node.addDependency(areaStack);
      return areaStack;
    });
    for (const areaStack of this.areaStacks) areaStack.addRoutes();

    const tick = new ProductFunction(this, "SchedulerTickFunction", {
      code,
      entry: tickEntry,
      description: "Every minute: enqueue the routing schedules that are due",
      environment,
      timeout: tickTimeout,
    });
    for (const each of tickGrants) grant(tick.role as IRole, each);
    for (const [name, value] of Object.entries(runEnqueueEnvironment)) tick.addEnvironment(name, value);
    const tickRule = new Rule(this, "SchedulerTickRule", {
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(tick)],
    });
    Validations.of(tickRule).acknowledge({
      id: "Serverless-EventBusDLQ",
      reason:
        "The once-a-minute tick: an invocation EventBridge fails to deliver is covered by the next minute's tick (due schedules stay due), and TickMissing alarms when ticks stop.",
    });

    const worker = new ProductFunction(this, "RoutingRunFunction", {
      code,
      entry: workerEntry,
      description: "Runs one routing schedule: collect visits, optimize, store the result, dispatch",
      // Context routingThreads caps the search threads (default: the cores the memory size gives; docs/api/routing-runs.md).
      environment: {
        ...environment,
        ...(this.node.tryGetContext("routingThreads") !== undefined
          ? { ROUTING_THREADS: String(this.node.tryGetContext("routingThreads")) }
          : {}),
      },
      timeout: Duration.seconds(runWorkerTimeoutSeconds),
      // Context runWorkerMemoryMb: cost against search quality (docs/api/routing-runs.md, "Worker memory").
      memorySize: runWorkerMemoryMb(this.node.tryGetContext("runWorkerMemoryMb")),
    });
    for (const each of workerGrants) grant(worker.role as IRole, each, "routing-results");
    // The road travel matrix cache (travel-cache/), only when the operator declared a road-network provider.
    const roadProviders = Object.values(props.travelProviders?.providers ?? {}).filter((provider) => provider.kind !== "greatCircle");
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
        Object.values(props.travelProviders?.providers ?? {}).flatMap((provider) =>
          provider.kind === "amazonLocation" ? [provider.region ?? this.region] : [],
        ),
      ),
    ];
    if (amazonRegions.length > 0) {
      worker.role?.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ["geo-routes:CalculateRouteMatrix"],
          resources: amazonRegions.map((region) => `arn:${this.partition}:geo-routes:${region}::provider/default`),
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

    const importWorker = new ProductFunction(this, "LegacyImportFunction", {
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
    const publisher = new ProductFunction(this, "WebhookPublisherFunction", {
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
      this,
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
    const deliveryWorker = new ProductFunction(this, "WebhookDeliveryFunction", {
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

    const oldestMessageAlarm = (id: string, queue: Queue, seconds: number, periods: number, description: string) =>
      new Alarm(this, id, {
        alarmDescription: `${description} (docs/operations.md, Runbook: "${id.replace(/Alarm$/, "")}")`,
        metric: queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5), statistic: "Maximum" }),
        threshold: seconds,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: periods,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    // Any message in a dead-letter queue is a failure an operator must look at.
    const deadLetterAlarm = (id: string, queue: Queue, periodMinutes: number, description: string) =>
      new Alarm(this, id, {
        alarmDescription: `${description} (docs/operations.md, Runbook: "${id.replace(/Alarm$/, "")}")`,
        metric: queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(periodMinutes), statistic: "Maximum" }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    const rootAlarms = [
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
      new Alarm(this, "TickMissingAlarm", {
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
      new Construct(this, "JobAlarms"),
      "Jobs (scheduler tick, routing-run worker, legacy-import worker, webhook publisher and delivery)",
      [tick, worker, importWorker, publisher, deliveryWorker],
      alarmTopic,
    );
    this.alarms = [
      planRejectedAlarm(this),
      ...jobAlarms,
      ...rootAlarms,
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
      new Alarm(this, "AuthorizerFailureAlarm", {
        alarmDescription:
          'The tenant authorizer failed on its own (JWKS unreachable, tenant store error), not on a bad token: callers get 401 or 500 (docs/operations.md, Runbook: "AuthorizerFailure")',
        metric: authorizerFailures.metric({ period: Duration.minutes(5), statistic: "Sum" }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      new Alarm(this, "AuthorizerThrottlesAlarm", {
        alarmDescription:
          'Lambda refused tenant authorizer invocations (concurrency used up): callers get 500 (docs/operations.md, Runbook: "AuthorizerThrottles")',
        metric: authorizerFunction.metricThrottles({ period: Duration.minutes(5), statistic: "Sum" }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      new Alarm(this, "TableThrottleAlarm", {
        alarmDescription:
          'DynamoDB throttled reads or writes of the table in 2 of 3 periods of 5 minutes (a hot partition or key): requests answer 503 sys-503 after their retry budget (docs/operations.md, Runbook: "TableThrottle")',
        metric: new MathExpression({
          expression: "reads + writes",
          usingMetrics: {
            reads: tableMetric(table, "ReadThrottleEvents"),
            writes: tableMetric(table, "WriteThrottleEvents"),
          },
          period: Duration.minutes(5),
          label: "Table throttle events",
        }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
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
      new Alarm(this, "WebhookPublisherIteratorAgeAlarm", {
        alarmDescription: `The webhook publisher is over ${publisherIteratorAgeAlarmMinutes} minutes behind the table's stream for 15 minutes: events are late, and records older than 24 h leave the stream (docs/operations.md, Runbook: "WebhookPublisherIteratorAge")`,
        metric: publisher.metric("IteratorAge", { period: Duration.minutes(5), statistic: "Maximum" }),
        threshold: publisherIteratorAgeAlarmMinutes * 60_000,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      new Alarm(this, "Api5xxRateAlarm", {
        alarmDescription:
          'More than 1 % of API requests answered 5xx over 5 minutes, once at least 20 arrived (docs/operations.md, Runbook: "Api5xxRate")',
        metric: new MathExpression({
          expression: "IF(requests >= 20, 100 * errors / requests, 0)",
          usingMetrics: {
            errors: api.metricServerError({ period: Duration.minutes(5), statistic: "Sum" }),
            requests: api.metricCount({ period: Duration.minutes(5), statistic: "Sum" }),
          },
          period: Duration.minutes(5),
          label: "API 5xx %",
        }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      new Alarm(this, "TickFailedAlarm", {
        alarmDescription:
          'The scheduler tick failed (an invocation error or timeout): due runs may not be enqueued (docs/operations.md, Runbook: "TickFailed")',
        metric: tick.metricErrors({ period: Duration.minutes(1), statistic: "Sum" }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      new Alarm(this, "TickNearTimeoutAlarm", {
        alarmDescription: `The scheduler tick ran over 80 % of its ${tickTimeout.toSeconds()} s timeout in 2 of 3 minutes (docs/operations.md, Runbook: "TickNearTimeout")`,
        metric: tick.metricDuration({ period: Duration.minutes(1), statistic: "Maximum" }),
        threshold: tickTimeout.toMilliseconds() * 0.8,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    ];
    for (const alarm of this.alarms.filter((each) => !jobAlarms.includes(each))) alarm.addAlarmAction(new SnsAction(alarmTopic));

    operationsDashboard(this, {
      api,
      areaStacks: this.areaStacks,
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

    code.dispose();

    new CfnOutput(this, "ApiUrl", { value: api.url, description: "Base URL (ends with /v3/)" });
    new CfnOutput(this, "TableName", { value: table.tableName });
    new CfnOutput(this, "BucketName", { value: bucket.bucketName });
    new CfnOutput(this, "RunQueueUrl", { value: runQueue.queueUrl });
    new CfnOutput(this, "ImportQueueArn", { value: importQueue.queueArn });
    // What `npm run ops -- pause-runs|resume-runs --aws` turns off and on (the run worker's event sources).
    new CfnOutput(this, "RunQueueArn", { value: runQueue.queueArn });
    new CfnOutput(this, "RunSpilloverQueueArn", { value: spilloverQueue.queueArn });
    new CfnOutput(this, "DuePageQueueArn", { value: duePageQueue.queueArn });
    new CfnOutput(this, "WebhookQueueArn", { value: webhookQueue.queueArn });
    new CfnOutput(this, "EventBusName", {
      value: eventBus.eventBusName,
      description: "Every domain event (source field-operations-api, detail-type = event type)",
    });
    new CfnOutput(this, "EventBusArn", { value: eventBus.eventBusArn });
    // What `npm run replay -- --aws <source>` and the runbook address by name.
    for (const [name, queue] of Object.entries({
      RunDeadLetterQueue: deadLetterQueue,
      ImportDeadLetterQueue: importDeadLetterQueue,
      WebhookDeadLetterQueue: webhookDeadLetterQueue,
      WebhookPublisherFailureQueue: publisherFailureQueue,
    })) {
      new CfnOutput(this, `${name}Url`, { value: queue.queueUrl });
      new CfnOutput(this, `${name}Arn`, { value: queue.queueArn });
    }
    new CfnOutput(this, "WebhookPublisherFunctionName", { value: publisher.functionName });
    // The runbook's names (docs/operations.md, Runbook): every root alarm, every queue, the tick rule, the topic.
    for (const alarm of this.alarms) {
      const id = jobAlarms.includes(alarm) ? `Job${alarm.node.id}` : alarm.node.id;
      new CfnOutput(this, `${id}Name`, { value: alarm.alarmName });
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
      new CfnOutput(this, `${name}Name`, { value: queue.queueName });
      if (!this.node.tryFindChild(`${name}Url`)) new CfnOutput(this, `${name}Url`, { value: queue.queueUrl });
    }
    new CfnOutput(this, "SchedulerTickRuleName", { value: tickRule.ruleName });
    new CfnOutput(this, "AlarmTopicArn", { value: alarmTopic.topicArn });
    new CfnOutput(this, "TableStreamArn", { value: table.tableStreamArn ?? "" });

    for (const sqsWorker of [worker, importWorker, deliveryWorker])
      Validations.of(sqsWorker).acknowledge({
        id: "Serverless-LambdaEventSourceMappingDestination",
        reason:
          "SQS event sources: a message that keeps failing moves to its queue's dead-letter queue through the redrive policy (with an age alarm); an on-failure destination would duplicate it.",
      });
  }
}

const tickEntry = "functions/jobs/scheduler-tick.ts";
const authorizerEntry = "functions/authorizer/tenant-authorizer.ts";

/** The key value auto-enrolled organizations share: a usage identifier, not a secret (clients never send API keys). */
const autoEnrollKeyValue = (stack: Stack) => `${stack.stackName}-auto-enrolled-organizations`;

/**
 * A gateway response body taking its message (and failedCode) from the authorizer's context. The
 * authorizer's messages contain no double quote or backslash, so they fit a JSON string as they are.
 */
function contextTemplate(status: number, messageKey: string, failedCodeKey: string | undefined, failedCode: string): string {
  const code = failedCodeKey ? `$context.authorizer.${failedCodeKey}` : failedCode;
  return `{"status":false,"message":"$context.authorizer.${messageKey}","failedCode":"${code}","statusCode":${status}}`;
}
const tickTimeout = Duration.seconds(55);
/** A delivery waiting this long (3 periods of 5 minutes) alarms: attempts are scheduled minutes apart, never this late. */
export const webhookOldestMessageAlarmSeconds = 15 * 60;

const tableMetric = (table: TableV2, metricName: string) =>
  new Metric({
    namespace: "AWS/DynamoDB",
    metricName,
    dimensionsMap: { TableName: table.tableName },
    period: Duration.minutes(5),
    statistic: "Sum",
  });

/** The publisher's stream lag that alarms: far below the stream's 24 h, far above a healthy second or two. */
export const publisherIteratorAgeAlarmMinutes = 10;
const workerEntry = "functions/jobs/routing-run.ts";
const importWorkerEntry = "functions/jobs/legacy-import.ts";
const publisherEntry = "functions/jobs/webhook-publisher.ts";
const deliveryEntry = "functions/jobs/webhook-delivery.ts";

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

const pascalCase = (name: string) => name.replace(/(^|[-_])(\w)/g, (_, _separator, letter: string) => letter.toUpperCase());

/**
 * Each public route (no token, so no usage plan) is limited to this rate and burst on its own,
 * far below the stage limit every tenant shares: a crawler of the OpenAPI document cannot take the API's capacity.
 */
export const publicRouteThrottle = { rateLimit: 10, burstLimit: 20 } as const;

function publicMethodThrottles(
  routes: readonly RouteDefinition[],
): Record<string, { throttlingRateLimit: number; throttlingBurstLimit: number }> {
  return Object.fromEntries(
    routes
      .filter((route) => route.auth === "none")
      .map((route) => [
        `${route.path}/${route.method}`,
        { throttlingRateLimit: publicRouteThrottle.rateLimit, throttlingBurstLimit: publicRouteThrottle.burstLimit },
      ]),
  );
}

/** The resource types an API Gateway deployment snapshots (what the stage serves until the next deployment). */
export const deploymentSnapshotTypes = new Set([
  "AWS::ApiGateway::Method",
  "AWS::ApiGateway::Resource",
  "AWS::ApiGateway::Authorizer",
  "AWS::ApiGateway::GatewayResponse",
  "AWS::ApiGateway::Model",
  "AWS::ApiGateway::RequestValidator",
]);

/**
 * Every snapshotted resource of the stack and its nested stacks as its template renders it (in its
 * own stack, so references read as that template's parameters): the deployment's logical id hashes
 * this, so any change to a method, path, authorizer (cache TTL, identity source), gateway response
 * or CORS preflight yields a new deployment, and nothing else does.
 */
function deploymentSnapshot(stack: Stack): unknown[] {
  return stack.node
    .findAll()
    .filter(
      (construct): construct is CfnResource =>
        CfnResource.isCfnResource(construct) && deploymentSnapshotTypes.has(construct.cfnResourceType),
    )
    .map((resource) => ({
      path: resource.node.path,
      rendered: Stack.of(resource).resolve((resource as unknown as { _toCloudFormation(): unknown })._toCloudFormation()),
    }))
    .sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * Access log lines: the standard fields plus who called (the tenant the authorizer named, the
 * usage-plan key), how long the function took beside the whole request, and why a request failed
 * (the gateway's error and the integration's). It is the one line every request writes (the
 * functions log only failures and slow calls), so it holds nothing CloudWatch or another field
 * already has: no time (the event's timestamp), protocol, response length or integration status,
 * and no trace id (most requests are not sampled; a failed request's function line carries it).
 */
export function accessLogFormat(): AccessLogFormat {
  return AccessLogFormat.custom(
    JSON.stringify({
      requestId: "$context.requestId",
      ip: "$context.identity.sourceIp",
      httpMethod: "$context.httpMethod",
      resourcePath: "$context.resourcePath",
      status: "$context.status",
      organizationId: "$context.authorizer.organizationId",
      userId: "$context.authorizer.principalId",
      apiKeyId: "$context.identity.apiKeyId",
      responseLatency: "$context.responseLatency",
      integrationLatency: "$context.integration.latency",
      error: "$context.error.message",
      errorType: "$context.error.responseType",
      integrationError: "$context.integration.error",
    }),
  );
}

/**
 * The accepted issuers are baked into the template (never parameters: the CDK CLI reuses a deployed
 * parameter's previous value, so a changed `-c jwtIssuer` would be ignored). A Rule per issuer
 * refuses cdk.json's placeholders: CloudFormation checks Rules before it creates or changes any
 * resource, so `cdk deploy` without real settings fails at once, while `cdk synth` (no account)
 * still works. Its assertions compare the synthesized values, so they hold for a real issuer.
 */
function refusePlaceholderIssuers(stack: Stack, issuers: readonly JwtIssuer[]): void {
  new CfnRule(stack, "JwtSettingsAreReal", {
    assertions: issuers.flatMap((each) => [
      {
        assert: Fn.conditionNot(Fn.conditionEquals(each.issuer, placeholderJwt.issuer)),
        assertDescription: `jwtIssuer is the placeholder ${placeholderJwt.issuer}: deploy with -c jwtIssuer=<your issuer> or -c jwtIssuersFile=<file> (docs/operations.md, Deploy)`,
      },
      {
        assert: Fn.conditionNot(Fn.conditionEquals(each.jwksUri, placeholderJwt.jwksUri)),
        assertDescription: `jwtJwksUri is the placeholder ${placeholderJwt.jwksUri}: deploy with -c jwtJwksUri=<your issuer's JWKS URL> (docs/operations.md, Deploy)`,
      },
    ]),
  });
}

/**
 * The object kind each bucket-granting area (and the run worker, as routing-results) reaches: its
 * prefix, and the earlier layout's objects it may still read (and, for certificates, delete).
 */
const bucketKindOfArea: Record<string, { prefix: string; legacyPattern: string; legacyActions: readonly string[] }> = {
  "app-integrations": {
    prefix: objectKinds.certificates,
    legacyPattern: "org/*/app-integrations/*",
    legacyActions: ["s3:GetObject", "s3:GetObjectVersion", "s3:DeleteObject", "s3:DeleteObjectVersion"],
  },
  "routing-results": {
    prefix: objectKinds.results,
    legacyPattern: "org/*/routing-results/*",
    legacyActions: ["s3:GetObject", "s3:GetObjectVersion"],
  },
};

/**
 * The file bucket's lifecycle, each period by context: uploaded exports expire `importRetentionDays`
 * (default 7) after upload, imported or not (an import reads its file within minutes); replaced and
 * deleted versions expire `noncurrentVersionDays` (default 30) after they stop being current;
 * unfinished multipart uploads are aborted after a day; result bodies expire only when
 * `resultRetentionDays` is set (a result's item outlives its body: reading it then answers without routes).
 * Proofs of delivery expire `proofRetentionDays` (default 400: a year of delivery disputes plus a
 * month's margin) after upload, and move to Standard-IA after 30 days (read in the first days, then
 * only in a dispute; S3 leaves objects under 128 KB, most signatures, in Standard).
 */
export function fileLifecycleRules(stack: Stack): LifecycleRule[] {
  const days = (key: string, fallback?: number) => {
    const value = stack.node.tryGetContext(key) ?? fallback;
    if (value === undefined) return undefined;
    const number = Number(value);
    if (!Number.isInteger(number) || number < 1) throw new Error(`${key} must be a whole number of days ≥ 1, got ${String(value)}`);
    return number;
  };
  const resultDays = days("resultRetentionDays");
  const proofDays = days("proofRetentionDays", PROOF_RETENTION_DAYS) as number;
  return [
    { id: "AbortIncompleteMultipartUploads", abortIncompleteMultipartUploadAfter: Duration.days(1) },
    {
      id: "ExpireNoncurrentVersions",
      noncurrentVersionExpiration: Duration.days(days("noncurrentVersionDays", 30) as number),
      expiredObjectDeleteMarker: true,
    },
    { id: "ExpireImportUploads", prefix: objectKinds.imports, expiration: Duration.days(days("importRetentionDays", 7) as number) },
    ...(resultDays ? [{ id: "ExpireResultBodies", prefix: objectKinds.results, expiration: Duration.days(resultDays) }] : []),
    {
      id: "ExpireProofsOfDelivery",
      prefix: objectKinds.proofs,
      // Standard-IA takes objects 30 days old at the earliest; a shorter retention just expires them.
      ...(proofDays > PROOF_IA_AFTER_DAYS
        ? { transitions: [{ storageClass: StorageClass.INFREQUENT_ACCESS, transitionAfter: Duration.days(PROOF_IA_AFTER_DAYS) }] }
        : {}),
      expiration: Duration.days(proofDays),
    },
  ];
}

/** Default days a proof of delivery is kept (context `proofRetentionDays`). */
export const PROOF_RETENTION_DAYS = 400;
const PROOF_IA_AFTER_DAYS = 30;

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
