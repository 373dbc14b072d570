import { Duration, NestedStack, type NestedStackProps, Validations } from "aws-cdk-lib";
import {
  AuthorizationType,
  type IAuthorizer,
  type IResource,
  Integration,
  IntegrationType,
  Method,
  type RestApi,
} from "aws-cdk-lib/aws-apigateway";
import { type IRole, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { LogGroup } from "aws-cdk-lib/aws-logs";
import { productLogGroupProps } from "#infra/constructs/observability-costs";
import type { Construct } from "constructs";
import { type RouteDefinition, type RouteGrant, routeGrantActions } from "#shared/http/route";
import { type FunctionCode, ProductFunction, writeLogsOnlyTo } from "#infra/constructs/api-function";
import { functionGroupAlarms } from "#infra/constructs/alarms";
import type { ITopic } from "aws-cdk-lib/aws-sns";

export interface ApiAreaStackProps extends NestedStackProps {
  /** The area's folder name (`functions/http/<area>/`). */
  area: string;
  routes: readonly RouteDefinition[];
  code: FunctionCode;
  api: RestApi;
  /** The stage name, as a literal: the stage itself is created after (and depends on) this stack. */
  stageName: string;
  /**
   * The path resource of a route, created by the stack that owns the path (infra/api-paths.ts,
   * pathOwners): this one, the root stack, or another area's.
   */
  resourceFor: (path: string) => IResource;
  environment: Record<string, string>;
  /** Added to the environment of the routes that enqueue runs (grant queueSend): the spillover queue and the share. */
  runEnqueueEnvironment: Record<string, string>;
  /** Where the area's alarms notify. */
  alarmTopic: ITopic;
  /** Gives a role what one grant of the route table allows. */
  grant: (role: IRole, grant: RouteGrant, area: string) => void;
  /** The tenant authorizer every authenticated method runs behind (its usage-plan key required). */
  authorizer: IAuthorizer;
}

/**
 * One area of the API (one folder of functions/http/) in its own nested stack: its functions, the
 * REST resources and methods only it uses, one log group for the area and one role per distinct
 * grant set. The root stack holds the API, the shared resources and the deployment, so each area
 * can grow to about a hundred routes before its template nears CloudFormation's 500 resources.
 */
export class ApiAreaStack extends NestedStack {
  readonly functions: Array<{ route: RouteDefinition; fn: IFunction }> = [];
  readonly logGroup: LogGroup;
  private readonly props: ApiAreaStackProps;

  constructor(scope: Construct, id: string, props: ApiAreaStackProps) {
    super(scope, id, props);
    this.props = props;
    // One log group for the area's functions: Lambda names each stream after its function.
    this.logGroup = new LogGroup(this, "Logs", productLogGroupProps(this, "api"));
  }

  /**
   * The area's functions, methods and alarms: added once every area stack exists, since a route
   * may sit under a path resource another area's stack owns.
   */
  addRoutes(): void {
    const props = this.props;

    // Functions with the same grants share a role: the role holds exactly the union of identical
    // grant sets, so no function gains an action its own route does not declare.
    const roles = new Map<string, Role>();
    const roleFor = (grants: readonly RouteGrant[]) => {
      // A grant whose actions another grant of the route already holds (tableRead beside tableWrite) changes nothing.
      const unique = [...new Set(grants)];
      const effective = unique.filter(
        (each) =>
          !unique.some((other) => other !== each && routeGrantActions[each].every((action) => routeGrantActions[other].includes(action))),
      );
      const key = effective.sort().join("+") || "none";
      let role = roles.get(key);
      if (!role) {
        role = new Role(this, `Role${key.replace(/(^|\+)(\w)/g, (_, _plus, letter: string) => letter.toUpperCase())}`, {
          assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
          description: `Functions of ${props.area} with grants: ${key}`,
        });
        writeLogsOnlyTo(role, this.logGroup);
        for (const grant of effective) props.grant(role, grant, props.area);
        roles.set(key, role);
      }
      return role;
    };

    for (const route of props.routes) {
      const fn = new ProductFunction(this, `${route.operationId}Function`, {
        code: props.code,
        entry: route.handler,
        description: `${route.method} /v3${route.path}`,
        environment: route.grants?.includes("queueSend") ? { ...props.environment, ...props.runEnqueueEnvironment } : props.environment,
        logGroup: this.logGroup,
        role: roleFor(route.grants ?? []),
        ...(route.function?.timeoutSeconds ? { timeout: Duration.seconds(route.function.timeoutSeconds) } : {}),
        ...(route.function?.memoryMb ? { memorySize: route.function.memoryMb } : {}),
      });
      const method = new Method(this, `${route.operationId}Method`, {
        resource: props.resourceFor(route.path),
        httpMethod: route.method,
        // Authenticated methods: the tenant authorizer, and the usage-plan key it supplies (apiKeySource AUTHORIZER).
        ...(route.auth === "none"
          ? {}
          : { options: { authorizer: props.authorizer, authorizationType: AuthorizationType.CUSTOM, apiKeyRequired: true } }),
        integration: new Integration({
          type: IntegrationType.AWS_PROXY,
          integrationHttpMethod: "POST",
          uri: `arn:${this.partition}:apigateway:${this.region}:lambda:path/2015-03-31/functions/${fn.functionArn}/invocations`,
        }),
      });
      acknowledgeMethodAuth(method, route);
      // One permission per route, for this method on the named stage only. (LambdaIntegration would
      // add a second one for console test-invokes, and name the stage by a reference to the Stage
      // resource, which depends on the deployment, which depends on this stack: a cycle.)
      fn.addPermission(`${route.operationId}Invoke`, {
        principal: new ServicePrincipal("apigateway.amazonaws.com"),
        sourceArn: props.api.arnForExecuteApi(route.method, route.path.replace(/\{[^}]+\}/g, "*"), props.stageName),
      });
      this.functions.push({ route, fn });
    }
    functionGroupAlarms(
      this,
      `API area ${props.area}`,
      this.functions.map(({ fn }) => fn),
      props.alarmTopic,
    );
  }
}

/** cdk-nag's authorization findings, acknowledged per method by what the route table says of it. */
function acknowledgeMethodAuth(method: Method, route: RouteDefinition): void {
  if (route.auth === "none") {
    const reason = `${route.method} /v3${route.path} is public by design (route table: auth none), throttled per method below the stage limit.`;
    Validations.of(method).acknowledge({ id: "AwsSolutions-APIG4", reason });
    Validations.of(method).acknowledge({ id: "AwsSolutions-COG4", reason });
  } else
    Validations.of(method).acknowledge({
      id: "AwsSolutions-COG4",
      reason:
        "Tokens may come from Cognito or any OIDC issuer: the tenant Lambda authorizer verifies them (aws-jwt-verify), not a Cognito authorizer.",
    });
}
