import { Stack, type StackProps } from "aws-cdk-lib";
import type { RequestAuthorizer, RestApi, UsagePlan } from "aws-cdk-lib/aws-apigateway";
import type { Alarm } from "aws-cdk-lib/aws-cloudwatch";
import type { Construct } from "constructs";
import type { ApiAreaStack } from "#infra/stacks/api-area-stack";
import { apiAreaStacks, productApi } from "#infra/stacks/field-operations/api";
import { functionEnvironment, productCode } from "#infra/stacks/field-operations/functions";
import { productGrants } from "#infra/stacks/field-operations/grants";
import { jobQueues, jobWorkers, webhookMessaging } from "#infra/stacks/field-operations/jobs";
import { alarmsAndDashboard, signalDestinations } from "#infra/stacks/field-operations/observability";
import { stackOutputs } from "#infra/stacks/field-operations/outputs";
import { productStorage } from "#infra/stacks/field-operations/storage";
import type { JwtIssuer } from "#shared/config/jwt-issuers";
import type { PlanCatalog } from "#shared/domain/tenants/plan-catalog";
import type { TravelProvidersDocument } from "#shared/domain/travel/providers";
import type { RouteDefinition } from "#shared/http/route";

export { accessLogFormat, deploymentSnapshotTypes, publicRouteThrottle } from "#infra/stacks/field-operations/api";
export {
  deliveryWorkerGrants,
  importWorkerGrants,
  publisherGrants,
  tickGrants,
  workerGrants,
} from "#infra/stacks/field-operations/jobs";
export { publisherIteratorAgeAlarmMinutes, webhookOldestMessageAlarmSeconds } from "#infra/stacks/field-operations/observability";
export { fileLifecycleRules, PROOF_RETENTION_DAYS } from "#infra/stacks/field-operations/storage";

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

/**
 * The product: REST API (stage v3) with one function per route of the route table, the single
 * DynamoDB table, the private certificate bucket, and the once-a-minute scheduler tick fanning
 * routing runs out through SQS to the run worker. Each API area's functions and methods sit in a
 * nested stack (ApiAreaStack), which keeps every template far below CloudFormation's 500 resources.
 *
 * The constructor only wires the units of infra/stacks/field-operations/ (storage, jobs, functions, api,
 * grants, observability, outputs). Each is a function that creates its resources in this stack's
 * own scope, never a child construct: a construct between them and the stack would change their
 * construct paths and so every logical id (test/infra/stateful-logical-ids.test.ts). The calls'
 * order is the template's resource order: moving one reorders the template (harmless to
 * CloudFormation, but a text diff of two synths then shows every line moved).
 */
export class FieldOperationsStack extends Stack {
  /** One nested stack per API area (functions/http/<area>/): functions, methods, their roles and logs. */
  readonly areaStacks: ApiAreaStack[];
  /** The root stack's alarms (jobs, queue, API); each area stack holds its functions' alarms. */
  readonly alarms: Alarm[];
  /** One usage plan per plan of the catalog, by plan name. */
  readonly usagePlans: Map<string, UsagePlan>;
  readonly api: RestApi;
  readonly authorizer: RequestAuthorizer;

  constructor(scope: Construct, id: string, props: FieldOperationsStackProps) {
    super(scope, id, props);
    const { table, bucket } = productStorage(this, props.travelProviders?.cacheTtlDays);
    const queues = jobQueues(this);
    const webhooks = webhookMessaging(this);
    const environment = functionEnvironment(this, props, { table, bucket, queues, webhooks });
    const code = productCode(this, { ...props, planOverrides: props.tenancy.planOverrides });
    const { accessLogs, alarmTopic } = signalDestinations(this, props.alarmEmail);
    const gateway = productApi(this, props, { code, table, environment, accessLogs });
    this.api = gateway.api;
    this.authorizer = gateway.authorizer;
    this.usagePlans = gateway.usagePlans;
    const grants = productGrants(this, { table, bucket, queues, webhooks });
    this.areaStacks = apiAreaStacks(this, props.routes, {
      code,
      gateway,
      environment,
      runEnqueueEnvironment: queues.runEnqueueEnvironment,
      grants,
      alarmTopic,
    });
    const jobs = jobWorkers(this, { code, environment, table, bucket, queues, webhooks, grants, travelProviders: props.travelProviders });
    const { alarms, jobAlarms } = alarmsAndDashboard(this, {
      alarmTopic,
      api: gateway.api,
      areaStacks: this.areaStacks,
      table,
      queues,
      webhooks,
      jobs,
      authorizerFunction: gateway.authorizerFunction,
      authorizerFailures: gateway.authorizerFailures,
    });
    this.alarms = alarms;
    code.dispose();
    stackOutputs(this, { api: gateway.api, table, bucket, queues, webhooks, jobs, alarms, jobAlarms, alarmTopic });
  }
}
