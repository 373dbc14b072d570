import { CfnResource, CfnRule, Duration, Fn, Lazy, RemovalPolicy, Size, Stack, Validations } from "aws-cdk-lib";
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
import type { TableV2 } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { FilterPattern, LogGroup, MetricFilter, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { ITopic } from "aws-cdk-lib/aws-sns";
import { CfnWebACLAssociation } from "aws-cdk-lib/aws-wafv2";
import { ApiGatewayCloudWatchRole, acknowledgeAccountLoggingPolicy } from "#infra/constructs/api-gateway-cloudwatch-role";
import { type FunctionCode, ProductFunction } from "#infra/constructs/api-function";
import { productMetricNamespace } from "#infra/constructs/metric-namespace";
import { apiSamplingRule } from "#infra/constructs/observability-costs";
import { apiArea, parentPath, pathSegments, rootOwner } from "#infra/api-paths";
import { currentPathOwners } from "#infra/api-path-owners";
import { placeholderJwt } from "#infra/placeholders";
import { ApiAreaStack } from "#infra/stacks/api-area-stack";
import type { ProductGrants } from "#infra/stacks/field-operations/grants";
import type { FunctionEnvironment } from "#infra/stacks/field-operations/functions";
import type { JwtIssuer } from "#shared/config/jwt-issuers";
import { usagePlanName } from "#shared/domain/tenants/plan-catalog";
import { authorizerFailureMessage } from "#shared/http/authorizer-failure";
import { gatewayAnswers, gatewayBearerChallenge, gatewayRetryAfterSeconds } from "#shared/http/gateway-responses";
import { binaryMediaTypes, type RouteDefinition } from "#shared/http/route";
import type { TenancyProps } from "#infra/stacks/field-operations-stack";

/** The REST API (stage v3) in the root stack: its gateway answers, the tenant authorizer, the deployment and stage, the usage plans. */
export interface ProductApi {
  api: RestApi;
  /** The CORS preflight every path resource gets (path resources of another stack's parent included). */
  cors: CorsOptions;
  authorizerFunction: ProductFunction;
  /** The log lines of the authorizer's own failures, counted (shared/http/authenticate.ts authorizerFailureMessage). */
  authorizerFailures: MetricFilter;
  authorizer: RequestAuthorizer;
  deployment: Deployment;
  stageName: string;
  stage: Stage;
  /** One usage plan per plan of the catalog, by plan name. */
  usagePlans: Map<string, UsagePlan>;
}

export function productApi(
  stack: Stack,
  props: {
    routes: readonly RouteDefinition[];
    jwtIssuers: readonly JwtIssuer[];
    corsAllowedOrigins: readonly string[];
    tenancy: TenancyProps;
    apiGatewayAccountRole?: boolean;
    apiGatewayExecutionLogs?: boolean;
    webAclArn?: string;
  },
  resources: { code: FunctionCode; table: TableV2; environment: FunctionEnvironment; accessLogs: LogGroup },
): ProductApi {
  // The JWT settings as parameters whose defaults are the context values: a Rule refuses the
  // placeholder values at deploy time, before CloudFormation creates anything, while synth needs no account.
  refusePlaceholderIssuers(stack, props.jwtIssuers);
  const accountRole = props.apiGatewayAccountRole ?? false;
  const executionLogs = accountRole || (props.apiGatewayExecutionLogs ?? false);
  const { api, cors } = restApi(stack, props.corsAllowedOrigins, accountRole);
  const { authorizerFunction, authorizerFailures, authorizer } = tenantAuthorizer(stack, {
    code: resources.code,
    table: resources.table,
    environment: resources.environment,
    jwtIssuers: props.jwtIssuers,
    tenancy: props.tenancy,
  });
  const stageName = "v3";
  const { deployment, stage } = apiStage(stack, {
    api,
    authorizer,
    code: resources.code,
    accessLogs: resources.accessLogs,
    routes: props.routes,
    tenancy: props.tenancy,
    stageName,
    executionLogs,
    webAclArn: props.webAclArn,
  });
  const usagePlans = tenantUsagePlans(stack, props.tenancy, api, stage);
  return { api, cors, authorizerFunction, authorizerFailures, authorizer, deployment, stageName, stage, usagePlans };
}

/** The RestApi and API Gateway's own answers (unknown route, oversize body, throttling, the authorizer's) in the product's error shape. */
function restApi(stack: Stack, corsAllowedOrigins: readonly string[], accountRole: boolean): { api: RestApi; cors: CorsOptions } {
  const anyOrigin = corsAllowedOrigins.includes("*");
  const cors: CorsOptions = {
    allowOrigins: anyOrigin ? Cors.ALL_ORIGINS : [...corsAllowedOrigins],
    allowHeaders: ["Authorization", "Content-Type", "Idempotency-Key", "If-Match"],
  };
  // API Gateway's own error answers carry the CORS header too, or a browser sees only a network
  // error. A gateway response cannot pick one origin of a list: with several, it echoes the
  // request's Origin (these bodies are fixed error messages, never data).
  const singleOrigin = anyOrigin ? "*" : corsAllowedOrigins.length === 1 ? corsAllowedOrigins[0] : undefined;
  const gatewayCorsHeaders: Record<string, string> = singleOrigin
    ? { "Access-Control-Allow-Origin": `'${singleOrigin}'` }
    : { "Access-Control-Allow-Origin": "method.request.header.Origin", Vary: "'Origin'" };
  // Every answer, the gateway's own included, tells browsers not to guess its content type.
  gatewayCorsHeaders["X-Content-Type-Options"] = "'nosniff'";
  // The deployment and stage are created below, after the area stacks that hold the methods.
  const api = new RestApi(stack, "Api", {
    // Per stack, so two stacks in one account keep apart in API Gateway's metrics (ApiName) and consoles;
    // the default stack keeps the name earlier installs have (and their metrics' history).
    restApiName: stack.stackName === "FieldOperations" ? "field-operations-api" : `${stack.stackName}-api`,
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
  const earlierAccountRole = api.node.tryFindChild("CloudWatchRole");
  if (earlierAccountRole) acknowledgeAccountLoggingPolicy(earlierAccountRole);
  Validations.of(api).acknowledge({
    id: "AwsSolutions-APIG2",
    reason:
      "Requests are validated by the zod schemas in each function, which also generate the OpenAPI document; API Gateway models would duplicate them.",
  });
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
  api.addGatewayResponse("Default5xx", {
    type: ResponseType.DEFAULT_5XX,
    responseHeaders,
    templates: errorBody(500, "Internal server error, please contact support.", "sys-500"),
  });
  // Every other gateway 4xx (401/403 from the gateway included: they fall back to the default) keeps its body and gains the header.
  api.addGatewayResponse("Default4xx", { type: ResponseType.DEFAULT_4XX, responseHeaders });
  return { api, cors };
}

/** The tenant authorizer: verifies the bearer JWT, reads the tenant, names its usage-plan key (docs/operations.md, "Tenants and plans"). */
function tenantAuthorizer(
  stack: Stack,
  resources: {
    code: FunctionCode;
    table: TableV2;
    environment: { TABLE_NAME: string; POWERTOOLS_SERVICE_NAME: string };
    jwtIssuers: readonly JwtIssuer[];
    tenancy: TenancyProps;
  },
): { authorizerFunction: ProductFunction; authorizerFailures: MetricFilter; authorizer: RequestAuthorizer } {
  const { code, table, environment, tenancy } = resources;
  const authorizerFunction = new ProductFunction(stack, "TenantAuthorizerFunction", {
    code,
    entry: authorizerEntry,
    description: "Tenant authorizer: verifies the bearer JWT, reads the tenant, names its usage-plan key",
    environment: {
      TABLE_NAME: environment.TABLE_NAME,
      // Only the authorizer verifies tokens; the routes read the caller from its context.
      JWT_ISSUERS_JSON: JSON.stringify(resources.jwtIssuers),
      POWERTOOLS_SERVICE_NAME: environment.POWERTOOLS_SERVICE_NAME,
      TENANT_AUTO_ENROLL: String(tenancy.autoEnroll),
      TENANT_AUTO_ENROLL_API_KEY: autoEnrollKeyValue(stack),
    },
    timeout: Duration.seconds(10),
    memorySize: 256,
  });
  // The authorizer's own failures (shared/http/authenticate.ts authorizerFailureMessage), apart from bad tokens.
  const authorizerFailures = new MetricFilter(stack, "AuthorizerFailureMetricFilter", {
    logGroup: authorizerFunction.logGroup,
    filterPattern: FilterPattern.stringValue("$.message", "=", authorizerFailureMessage),
    metricNamespace: productMetricNamespace(stack),
    metricName: "AuthorizerFailures",
    metricValue: "1",
  });
  // One GetItem: the tenant record. Nothing else.
  authorizerFunction.addToRolePolicy(new PolicyStatement({ actions: ["dynamodb:GetItem"], resources: [table.tableArn] }));
  const authorizer = new RequestAuthorizer(stack, "TenantAuthorizer", {
    handler: authorizerFunction,
    identitySources: [IdentitySource.header("Authorization")],
    resultsCacheTtl: Duration.seconds(tenancy.authorizerCacheTtlSeconds),
  });
  return { authorizerFunction, authorizerFailures, authorizer };
}

/** The deployment (a snapshot of every method, see deploymentSnapshot), the stage with its logs, throttles and tracing, and its optional WAF. */
function apiStage(
  stack: Stack,
  resources: {
    api: RestApi;
    authorizer: RequestAuthorizer;
    code: FunctionCode;
    accessLogs: LogGroup;
    routes: readonly RouteDefinition[];
    tenancy: TenancyProps;
    stageName: string;
    executionLogs: boolean;
    webAclArn: string | undefined;
  },
): { deployment: Deployment; stage: Stage } {
  const { api, tenancy, stageName, executionLogs } = resources;
  const deployment = new Deployment(stack, "Deployment", { api, description: "Field Operations Management API v3" });
  deployment.node.addDependency(resources.authorizer);
  // A deployment is a snapshot of the API's methods, resources, authorizers and gateway responses;
  // a change to any of them only reaches the stage through a new deployment. CDK hashes only the
  // RestApi itself (and only for latestDeployment), and the methods live in nested stacks: so the
  // hand-made deployment's logical id hashes every such resource of the root and area templates,
  // as rendered (deploymentSnapshot). Throttles and usage plans update the stage in place.
  deployment.addToLogicalId(Lazy.any({ produce: () => deploymentSnapshot(stack) }));
  // API Gateway writes execution logs to this group by name; created here so it has a retention period.
  const executionLogGroup = new LogGroup(stack, "ApiExecutionLogs", {
    logGroupName: `API-Gateway-Execution-Logs_${api.restApiId}/${stageName}`,
    retention: RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  // The stage limit guards the whole API; each tenant's own limit is its usage plan's, so the stage must admit the fastest plan.
  const stage = new Stage(stack, "Stage", {
    deployment,
    stageName,
    throttlingRateLimit: Math.max(100, ...tenancy.plans.plans.map((plan) => plan.rate)),
    throttlingBurstLimit: Math.max(200, ...tenancy.plans.plans.map((plan) => plan.burst)),
    // Execution logging needs the account's CloudWatch role (apiGatewayAccountRole / apiGatewayExecutionLogs).
    loggingLevel: executionLogs ? MethodLoggingLevel.ERROR : MethodLoggingLevel.OFF,
    accessLogDestination: new LogGroupLogDestination(resources.accessLogs),
    accessLogFormat: accessLogFormat(),
    tracingEnabled: true,
    // The public routes (no token, so no usage plan) are limited per method, below the stage limit.
    methodOptions: publicMethodThrottles(resources.routes),
  });
  stage.node.addDependency(executionLogGroup);
  if (!resources.webAclArn)
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
  const cloudWatchRole = new ApiGatewayCloudWatchRole(stack, "ApiGatewayCloudWatchRole", { code: resources.code });
  stage.node.addDependency(cloudWatchRole.resource);
  // An install that still holds the account setting of earlier versions (apiGatewayAccountRole): read it after that is in place.
  const legacyAccount = api.node.tryFindChild("Account");
  if (legacyAccount) cloudWatchRole.resource.node.addDependency(legacyAccount);
  // Traces of API routes: 1/s + 1 % by default (infra/constructs/observability-costs.ts).
  apiSamplingRule(stack, api.restApiName, stageName);
  api.deploymentStage = stage;
  if (resources.webAclArn) {
    new CfnWebACLAssociation(stack, "ApiWebAclAssociation", { resourceArn: stage.stageArn, webAclArn: resources.webAclArn });
  }
  return { deployment, stage };
}

/** One usage plan per plan: the gateway throttles and counts each tenant's calls under its key. */
function tenantUsagePlans(stack: Stack, tenancy: TenancyProps, api: RestApi, stage: Stage): Map<string, UsagePlan> {
  const usagePlans = new Map<string, UsagePlan>();
  for (const plan of tenancy.plans.plans) {
    usagePlans.set(
      plan.name,
      new UsagePlan(stack, `UsagePlan${pascalCase(plan.name)}`, {
        name: usagePlanName(stack.stackName, plan.name),
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
    const poolKey = new ApiKey(stack, "AutoEnrollApiKey", {
      value: autoEnrollKeyValue(stack),
      description: "Organizations auto-enrolled on the default plan",
    });
    usagePlans.get(tenancy.plans.defaultPlan.name)?.addApiKey(poolKey);
  }
  return usagePlans;
}

/**
 * One nested stack per API area (functions/http/<area>/) with its functions and methods, and the path
 * resources, each created once by the stack that owns it (pinned: infra/api-path-owners.json). The
 * deployment depends on every area stack.
 */
export function apiAreaStacks(
  stack: Stack,
  routes: readonly RouteDefinition[],
  resources: {
    code: FunctionCode;
    gateway: ProductApi;
    environment: Record<string, string>;
    runEnqueueEnvironment: Record<string, string>;
    grants: ProductGrants;
    alarmTopic: ITopic;
  },
): ApiAreaStack[] {
  const { api, cors, stageName, authorizer, deployment } = resources.gateway;
  const areaOf = (route: RouteDefinition) => apiArea(route.handler);
  const areas = new Map<string, RouteDefinition[]>();
  for (const route of routes) areas.set(areaOf(route), [...(areas.get(areaOf(route)) ?? []), route]);
  const areaStackOf = new Map<string, ApiAreaStack>();
  const owners = currentPathOwners(routes);
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
    const ownerStack = owner === rootOwner ? stack : areaStackOf.get(owner);
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
  const areaStacks = [...areas].map(([area, routes]) => {
    const areaStack = new ApiAreaStack(stack, `${pascalCase(area)}Api`, {
      description: `Field Operations API: ${area} routes`,
      area,
      routes,
      code: resources.code,
      api,
      stageName,
      resourceFor,
      environment: resources.environment,
      runEnqueueEnvironment: resources.runEnqueueEnvironment,
      grant: resources.grants.grant,
      alarmTopic: resources.alarmTopic,
      authorizer,
    });
    areaStackOf.set(area, areaStack);
    deployment.node.addDependency(areaStack);
    return areaStack;
  });
  for (const areaStack of areaStacks) areaStack.addRoutes();
  return areaStacks;
}

export const authorizerEntry = "functions/authorizer/tenant-authorizer.ts";

const errorBody = (status: number, message: string, failedCode: string) => ({
  "application/json": JSON.stringify({ status: false, message, failedCode, statusCode: status }),
});

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
