import { CustomResource, Duration, RemovalPolicy, Stack, Validations } from "aws-cdk-lib";
import { type IRole, ManagedPolicy, PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Construct, type IConstruct } from "constructs";
import { type FunctionCode, ProductFunction } from "#infra/constructs/api-function";

/** The handler of the custom resource (bundled like every function: FunctionCode). */
export const apiGatewayCloudWatchRoleEntry = "infra/custom-resources/api-gateway-cloudwatch-role.ts";

/**
 * API Gateway's account-level CloudWatch Logs role, set only when the account and region have none
 * (infra/custom-resources/api-gateway-cloudwatch-role.ts): the stage's access logging needs it, so
 * the stage depends on `resource`. The role is this stack's, retained: once API Gateway logs as it,
 * other stacks' APIs may too, so neither the role nor the setting goes with this stack.
 */
export class ApiGatewayCloudWatchRole extends Construct {
  readonly role: Role;
  readonly resource: CustomResource;
  readonly function: ProductFunction;

  constructor(scope: Construct, id: string, props: { code: FunctionCode }) {
    super(scope, id);
    this.role = new Role(this, "Role", {
      assumedBy: new ServicePrincipal("apigateway.amazonaws.com"),
      description: "API Gateway's account-level CloudWatch Logs role (set only if the region had none; retained)",
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName("service-role/AmazonAPIGatewayPushToCloudWatchLogs")],
    });
    this.role.applyRemovalPolicy(RemovalPolicy.RETAIN);
    acknowledgeAccountLoggingPolicy(this.role);
    this.function = new ProductFunction(this, "Function", {
      code: props.code,
      entry: apiGatewayCloudWatchRoleEntry,
      description: "Custom resource: sets API Gateway's CloudWatch Logs role only when the region has none",
      // Like every function of the product, it has an environment (its logs carry the service name).
      environment: { POWERTOOLS_SERVICE_NAME: "field-operations-api" },
      timeout: Duration.minutes(3),
      memorySize: 256,
    });
    const stack = Stack.of(this);
    this.function.addToRolePolicy(
      new PolicyStatement({
        actions: ["apigateway:GET", "apigateway:PATCH"],
        resources: [`arn:${stack.partition}:apigateway:${stack.region}::/account`],
      }),
    );
    // To look whether the role the setting names still exists.
    this.function.addToRolePolicy(
      new PolicyStatement({ actions: ["iam:GetRole"], resources: [`arn:${stack.partition}:iam::${stack.account}:role/*`] }),
    );
    // UpdateAccount hands the role to API Gateway.
    this.function.addToRolePolicy(new PolicyStatement({ actions: ["iam:PassRole"], resources: [this.role.roleArn] }));
    Validations.of(this.function.role as IRole).acknowledge({
      id: "AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:iam::<AWS::AccountId>:role/*]",
      reason:
        "Only iam:GetRole (read), to tell whether the role API Gateway's account setting names still exists; it may be any role of the account.",
    });
    this.resource = new CustomResource(this, "Setting", {
      serviceToken: this.function.functionArn,
      resourceType: "Custom::ApiGatewayCloudWatchRole",
      properties: { RoleArn: this.role.roleArn },
      // Delete is a no-op in the handler anyway; Retain also spares the call when the stack goes.
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}

/** cdk-nag's managed-policy finding on an API Gateway account logging role (this one, or the earlier installs' `CloudWatchRole`). */
export function acknowledgeAccountLoggingPolicy(role: IConstruct): void {
  Validations.of(role).acknowledge({
    id: "AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]",
    reason:
      "API Gateway's account-level logging role: the AWS-managed policy lets API Gateway create and write the log groups of every API of the account and region (the setting is per account, not per API).",
  });
}
