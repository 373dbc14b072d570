import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { APIGatewayClient, GetAccountCommand } from "@aws-sdk/client-api-gateway";
import { CloudFormationClient, GetTemplateCommand } from "@aws-sdk/client-cloudformation";
import { GetRoleCommand, IAMClient } from "@aws-sdk/client-iam";
import { GetAccountSettingsCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { ListServiceQuotasCommand, ServiceQuotasClient } from "@aws-sdk/client-service-quotas";
import { GetParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { GetCallerIdentityCommand, STSClient } from "@aws-sdk/client-sts";
import { jwtIssuersFromContext } from "#infra/jwt-issuers-context";
import { formatPreflight, type PreflightAws, runPreflight } from "#local/preflight";
import { repositoryRoot } from "#local/stack";
import { planOverridesFromEnvironment } from "#shared/config/tenant-plans";
import { planCatalog } from "#shared/domain/tenants/plan-catalog";
import { listTenants } from "#shared/store/tenant-store";

/**
 * `npm run preflight -- --aws [-c key=value …]`: read-only checks of the account and region the AWS
 * credentials point at, before `cdk deploy` (local/preflight.ts). The settings are cdk.json's context
 * overridden by the same `-c` flags the deploy takes. Without `--aws` only the JWKS is checked.
 */
const usage = "usage: npm run preflight -- [--aws] [-c key=value …]   (the -c flags you deploy with)";

let values: { aws?: boolean; context?: string[]; help?: boolean };
try {
  ({ values } = parseArgs({
    options: {
      aws: { type: "boolean", default: false },
      context: { type: "string", short: "c", multiple: true, default: [] },
      help: { type: "boolean", short: "h", default: false },
    },
  }));
} catch (error) {
  process.stderr.write(`npm run preflight: ${(error as Error).message}\n${usage}\n`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}

const context: Record<string, unknown> = {
  ...(JSON.parse(readFileSync(join(repositoryRoot, "cdk.json"), "utf8")) as { context: Record<string, unknown> }).context,
  ...Object.fromEntries(
    (values.context ?? []).map((pair) => {
      const at = pair.indexOf("=");
      return at < 0 ? [pair, "true"] : [pair.slice(0, at), pair.slice(at + 1)];
    }),
  ),
};
const text = (key: string, fallback: string) => (context[key] === undefined ? fallback : String(context[key]));

function realAws(): PreflightAws {
  const sts = new STSClient({});
  const apiGateway = new APIGatewayClient({});
  const iam = new IAMClient({});
  const lambda = new LambdaClient({});
  const quotas = new ServiceQuotasClient({});
  const ssm = new SSMClient({});
  const cloudFormation = new CloudFormationClient({});
  return {
    callerIdentity: async () => {
      const identity = await sts.send(new GetCallerIdentityCommand({}));
      return { account: identity.Account ?? "", arn: identity.Arn ?? "" };
    },
    region: async () => {
      try {
        return await sts.config.region();
      } catch {
        return undefined;
      }
    },
    apiGatewayCloudWatchRoleArn: async () => (await apiGateway.send(new GetAccountCommand({}))).cloudwatchRoleArn || undefined,
    roleExists: async (roleArn) => {
      try {
        await iam.send(new GetRoleCommand({ RoleName: roleArn.split("/").pop() }));
        return true;
      } catch (error) {
        if ((error as { name?: string }).name === "NoSuchEntityException") return false;
        throw error;
      }
    },
    lambdaConcurrency: async () => {
      const settings = await lambda.send(new GetAccountSettingsCommand({}));
      return {
        limit: settings.AccountLimit?.ConcurrentExecutions ?? 0,
        unreserved: settings.AccountLimit?.UnreservedConcurrentExecutions ?? 0,
      };
    },
    lambdaMemoryQuotaMb: async () => {
      let token: string | undefined;
      do {
        const page = await quotas.send(new ListServiceQuotasCommand({ ServiceCode: "lambda", NextToken: token }));
        const memory = page.Quotas?.find((quota) => /memory/i.test(quota.QuotaName ?? "") && /function/i.test(quota.QuotaName ?? ""));
        if (memory?.Value !== undefined) return memory.Value;
        token = page.NextToken;
      } while (token);
      return undefined;
    },
    bootstrapVersion: async (qualifier) => {
      try {
        const parameter = await ssm.send(new GetParameterCommand({ Name: `/cdk-bootstrap/${qualifier}/version` }));
        return Number(parameter.Parameter?.Value);
      } catch (error) {
        if ((error as { name?: string }).name === "ParameterNotFound") return undefined;
        throw error;
      }
    },
    ...(process.env.TABLE_NAME
      ? {
          tenantPlans: async () => (await listTenants()).map((tenant) => ({ organizationId: tenant.organizationId, plan: tenant.plan })),
        }
      : {}),
    deployedTemplate: async (stackName) => {
      try {
        return (await cloudFormation.send(new GetTemplateCommand({ StackName: stackName, TemplateStage: "Original" }))).TemplateBody;
      } catch (error) {
        if (/does not exist/.test((error as Error).message)) return undefined;
        throw error;
      }
    },
  };
}

const results = await runPreflight(
  {
    stackName: text("stackName", "FieldOperations"),
    issuers: jwtIssuersFromContext((key) => context[key]),
    // The plans the deploy will build usage plans for (tenantPlansFile, else TENANT_PLANS_FILE, as infra/app.ts reads them).
    planNames: planCatalog(
      context.tenantPlansFile
        ? JSON.parse(readFileSync(resolve(repositoryRoot, String(context.tenantPlansFile)), "utf8"))
        : planOverridesFromEnvironment({ TENANT_PLANS_FILE: process.env.TENANT_PLANS_FILE }),
    ).plans.map((plan) => plan.name),
    ...(context.runWorkerMaxConcurrency !== undefined ? { runWorkerMaxConcurrency: Number(context.runWorkerMaxConcurrency) } : {}),
    ...(context.runWorkerMemoryMb !== undefined ? { runWorkerMemoryMb: Number(context.runWorkerMemoryMb) } : {}),
    ...(context["@aws-cdk/core:bootstrapQualifier"] !== undefined
      ? { bootstrapQualifier: String(context["@aws-cdk/core:bootstrapQualifier"]) }
      : {}),
  },
  {
    ...(values.aws ? { aws: realAws() } : {}),
    fetchJwks: async (uri) => {
      const response = await fetch(uri, { signal: AbortSignal.timeout(5000) });
      return { status: response.status, body: await response.json().catch(() => undefined) };
    },
  },
);
process.stdout.write(`${formatPreflight(results)}\n`);
process.exit(results.every((result) => result.ok) ? 0 : 1);
