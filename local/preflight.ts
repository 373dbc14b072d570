import { placeholderJwt } from "#infra/placeholders";
import { tenantSlotCap } from "#shared/domain/fairness/worker-slots";
import {
  defaultRunWorkerMaxConcurrency,
  duePageQueueDefinition,
  importQueueDefinition,
  runWorkerMemoryMb,
  spilloverMaxConcurrency,
  webhookQueueDefinition,
} from "#shared/queue/definitions";

/**
 * `npm run preflight -- --aws`: read-only checks of an account and region before `cdk deploy`
 * (docs/operations.md, Deploy, step 1). Each check says what it found and, when it fails, what to do.
 * The checks read AWS only through `PreflightAws` (the CLI wires the SDK; the tests stub it).
 */
export interface PreflightAws {
  /** STS GetCallerIdentity. */
  callerIdentity(): Promise<{ account: string; arn: string }>;
  /** The region the SDK resolved (AWS_REGION, the profile), if any. */
  region(): Promise<string | undefined>;
  /** API Gateway GetAccount's cloudwatchRoleArn. */
  apiGatewayCloudWatchRoleArn(): Promise<string | undefined>;
  roleExists(roleArn: string): Promise<boolean>;
  /** Lambda GetAccountSettings. */
  lambdaConcurrency(): Promise<{ limit: number; unreserved: number }>;
  /** Service Quotas' Lambda memory quota (MB), when the account reports one. */
  lambdaMemoryQuotaMb(): Promise<number | undefined>;
  /** SSM `/cdk-bootstrap/<qualifier>/version`; undefined when the environment is not bootstrapped. */
  bootstrapVersion(qualifier: string): Promise<number | undefined>;
  /** The deployed stack's template (CloudFormation GetTemplate), undefined when the stack does not exist yet. */
  deployedTemplate(stackName: string): Promise<string | undefined>;
  /** Every enrolled tenant's plan (the table's tenants index); absent when the table is not known (TABLE_NAME). */
  tenantPlans?(): Promise<Array<{ organizationId: string; plan: string }>>;
}

/** Fetches a JWKS document (the CLI: fetch with a timeout). */
export type JwksFetch = (uri: string) => Promise<{ status: number; body: unknown }>;

export interface PreflightSettings {
  stackName: string;
  /** Every accepted issuer (jwtIssuer…, or the issuers file). */
  issuers: ReadonlyArray<{ issuer: string; audience: string; jwksUri: string }>;
  runWorkerMaxConcurrency?: number;
  runWorkerMemoryMb?: number;
  bootstrapQualifier?: string;
  /** The plans the plans file about to be deployed declares (tenantPlansFile): tenants on any other plan are flagged. */
  planNames?: readonly string[];
}

export interface CheckResult {
  check: string;
  ok: boolean;
  detail: string;
  /** What to do, when not ok. */
  fix?: string;
}

/** The concurrency Lambda keeps unreserved in every account, and what the API itself should find free. */
export const lambdaUnreservedMinimum = 100;
export const apiConcurrencyHeadroom = 100;
/** The stream publisher: one concurrent batch per stream shard; an on-demand table's stream has a few. */
export const streamShardsAssumed = 4;
/** CDK's synthesized templates require bootstrap version 6 or newer (their BootstrapVersion rule). */
export const minimumBootstrapVersion = 6;

/** What the background work (event sources, the tick) may run at once: the account must hold that and the API beside it. */
export function backgroundConcurrency(runWorkerMaxConcurrency = defaultRunWorkerMaxConcurrency): number {
  return (
    runWorkerMaxConcurrency +
    spilloverMaxConcurrency(tenantSlotCap(runWorkerMaxConcurrency)) +
    duePageQueueDefinition.maxConcurrency +
    importQueueDefinition.maxConcurrency +
    webhookQueueDefinition.maxConcurrency +
    streamShardsAssumed +
    1
  );
}

export async function runPreflight(
  settings: PreflightSettings,
  dependencies: { aws?: PreflightAws; fetchJwks: JwksFetch },
): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const aws = dependencies.aws;
  if (aws) {
    let identity: { account: string; arn: string } | undefined;
    try {
      identity = await aws.callerIdentity();
      results.push({ check: "credentials", ok: true, detail: `${identity.arn} (account ${identity.account})` });
    } catch (error) {
      results.push({
        check: "credentials",
        ok: false,
        detail: errorText(error),
        fix: "configure AWS credentials (AWS_PROFILE, `aws sso login`, or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)",
      });
    }
    const region = await aws.region().catch(() => undefined);
    results.push(
      region
        ? { check: "region", ok: true, detail: region }
        : { check: "region", ok: false, detail: "no region resolved", fix: "set AWS_REGION (or the profile's region)" },
    );
    // Without credentials and a region nothing else can be read.
    if (!identity || !region) return [...results, ...(await jwksChecks(settings, dependencies.fetchJwks))];
    results.push(await cloudWatchRoleCheck(aws, settings.stackName));
    results.push(...(await lambdaQuotaChecks(aws, settings)));
    results.push(await bootstrapCheck(aws, settings.bootstrapQualifier ?? "hnb659fds", identity.account, region));
    if (aws.tenantPlans && settings.planNames) results.push(await tenantPlansCheck(aws.tenantPlans(), settings.planNames));
  }
  results.push(...(await jwksChecks(settings, dependencies.fetchJwks)));
  return results;
}

async function cloudWatchRoleCheck(aws: PreflightAws, stackName: string): Promise<CheckResult> {
  const check = "API Gateway CloudWatch role";
  try {
    // Installs older than the custom resource hold the setting as ApiAccount/ApiCloudWatchRole (deleted on removal unless retained first).
    const template = await aws.deployedTemplate(stackName);
    if (template) {
      const resources =
        (JSON.parse(template) as { Resources?: Record<string, { Type?: string; DeletionPolicy?: string }> }).Resources ?? {};
      const unretained = Object.entries(resources).filter(
        ([id, resource]) =>
          (/^ApiCloudWatchRole[0-9A-F]{8}$/.test(id) || resource.Type === "AWS::ApiGateway::Account") &&
          resource.DeletionPolicy !== "Retain",
      );
      if (unretained.length > 0)
        return {
          check,
          ok: false,
          detail: `stack ${stackName} holds ${unretained.map(([id]) => id).join(", ")} without DeletionPolicy Retain: an upgrade would delete the role API Gateway logs as`,
          fix: "deploy once with `-c apiGatewayAccountRole=true` (keeps them, retained), then deploy as usual (docs/operations.md, Upgrades)",
        };
    }
    const current = await aws.apiGatewayCloudWatchRoleArn();
    if (!current) return { check, ok: true, detail: "none set: the stack's custom resource will set its own role (retained)" };
    if (await aws.roleExists(current)) return { check, ok: true, detail: `${current} (kept as it is)` };
    return { check, ok: true, detail: `${current} no longer exists: the stack's custom resource will set its own role` };
  } catch (error) {
    return {
      check,
      ok: false,
      detail: errorText(error),
      fix: "allow apigateway:GET on /account, iam:GetRole and cloudformation:GetTemplate to the deploying identity",
    };
  }
}

async function lambdaQuotaChecks(aws: PreflightAws, settings: PreflightSettings): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const background = backgroundConcurrency(settings.runWorkerMaxConcurrency);
  const needed = background + apiConcurrencyHeadroom + lambdaUnreservedMinimum;
  try {
    const { limit, unreserved } = await aws.lambdaConcurrency();
    results.push(
      limit >= needed
        ? {
            check: "Lambda concurrency",
            ok: true,
            detail: `account limit ${limit} (unreserved ${unreserved}) ≥ ${needed} (background ${background} + API ${apiConcurrencyHeadroom} + Lambda's unreserved ${lambdaUnreservedMinimum})`,
          }
        : {
            check: "Lambda concurrency",
            ok: false,
            detail: `account limit ${limit} < ${needed}: the background event sources alone may run ${background} at once and starve the API`,
            fix: `request "Concurrent executions" ≥ ${needed} in Service Quotas (Lambda), or lower -c runWorkerMaxConcurrency`,
          },
    );
  } catch (error) {
    results.push({ check: "Lambda concurrency", ok: false, detail: errorText(error), fix: "allow lambda:GetAccountSettings" });
  }
  const memory = settings.runWorkerMemoryMb ?? runWorkerMemoryMb(undefined);
  try {
    const quota = await aws.lambdaMemoryQuotaMb();
    results.push(
      quota === undefined
        ? { check: "Lambda memory", ok: true, detail: `no memory quota reported; the largest function needs ${memory} MB` }
        : quota >= memory
          ? { check: "Lambda memory", ok: true, detail: `quota ${quota} MB ≥ ${memory} MB (the run worker)` }
          : {
              check: "Lambda memory",
              ok: false,
              detail: `quota ${quota} MB < ${memory} MB the run worker is given`,
              fix: `request a higher Lambda memory quota, or deploy with -c runWorkerMemoryMb=${quota}`,
            },
    );
  } catch (error) {
    results.push({ check: "Lambda memory", ok: false, detail: errorText(error), fix: "allow servicequotas:ListServiceQuotas" });
  }
  return results;
}

async function bootstrapCheck(aws: PreflightAws, qualifier: string, account: string, region: string): Promise<CheckResult> {
  const check = "CDK bootstrap";
  const fix = `npx cdk bootstrap aws://${account}/${region}`;
  try {
    const version = await aws.bootstrapVersion(qualifier);
    if (version === undefined) return { check, ok: false, detail: `not bootstrapped (no /cdk-bootstrap/${qualifier}/version)`, fix };
    if (version < minimumBootstrapVersion)
      return { check, ok: false, detail: `version ${version} < ${minimumBootstrapVersion}`, fix: `${fix} (updates the bootstrap stack)` };
    return { check, ok: true, detail: `version ${version}` };
  } catch (error) {
    return { check, ok: false, detail: errorText(error), fix: `allow ssm:GetParameter on /cdk-bootstrap/*, or ${fix}` };
  }
}

async function jwksChecks(settings: PreflightSettings, fetchJwks: JwksFetch): Promise<CheckResult[]> {
  if (settings.issuers.length === 0)
    return [
      {
        check: "JWT issuers",
        ok: false,
        detail: "no issuer configured",
        fix: "set jwtIssuer/jwtAudience/jwtJwksUri (docs/operations.md, Deploy)",
      },
    ];
  const results: CheckResult[] = [];
  for (const issuer of settings.issuers) {
    const check = `JWKS of ${issuer.issuer}`;
    if (issuer.issuer === placeholderJwt.issuer || issuer.jwksUri === placeholderJwt.jwksUri) {
      results.push({
        check,
        ok: false,
        detail: "the placeholder of cdk.json",
        fix: "deploy with your issuer's settings (docs/operations.md, Deploy)",
      });
      continue;
    }
    if (!issuer.jwksUri.startsWith("https://")) {
      results.push({ check, ok: false, detail: `${issuer.jwksUri} is not HTTPS`, fix: "use the issuer's HTTPS JWKS URL" });
      continue;
    }
    try {
      const { status, body } = await fetchJwks(issuer.jwksUri);
      const keys = (body as { keys?: Array<{ kty?: string; use?: string }> } | undefined)?.keys;
      const signing = Array.isArray(keys) ? keys.filter((key) => key.kty === "RSA" && (key.use ?? "sig") === "sig") : [];
      results.push(
        status === 200 && signing.length > 0
          ? { check, ok: true, detail: `${issuer.jwksUri}: ${signing.length} RSA signing key(s)` }
          : {
              check,
              ok: false,
              detail: `${issuer.jwksUri} answered ${status}${status === 200 ? " without an RSA signing key" : ""}`,
              fix: "check jwtJwksUri: the authorizer refuses every token it cannot verify",
            },
      );
    } catch (error) {
      results.push({
        check,
        ok: false,
        detail: `${issuer.jwksUri}: ${errorText(error)}`,
        fix: "check jwtJwksUri and that it is reachable from the internet",
      });
    }
  }
  return results;
}

/**
 * A plan removed from (or renamed in) the plans file takes its usage plan with it on deploy: its
 * tenants' keys would be on no usage plan (403 tenant-403-key) until moved. Flag them first.
 */
async function tenantPlansCheck(
  tenantPlans: Promise<Array<{ organizationId: string; plan: string }>>,
  planNames: readonly string[],
): Promise<CheckResult> {
  const check = "tenant plans";
  try {
    const tenants = await tenantPlans;
    const orphaned = new Map<string, number>();
    for (const { plan } of tenants) if (!planNames.includes(plan)) orphaned.set(plan, (orphaned.get(plan) ?? 0) + 1);
    if (orphaned.size === 0) return { check, ok: true, detail: `${tenants.length} tenant(s), every one on a plan of the plans file` };
    const names = [...orphaned.keys()];
    return {
      check,
      ok: false,
      detail: `tenants on plans the plans file lacks: ${names.map((name) => `${name} (${orphaned.get(name)})`).join(", ")}`,
      fix: names.map((name) => `npm run tenant -- retire-plan ${name} --to <plan> --aws`).join("; "),
    };
  } catch (error) {
    return { check, ok: false, detail: errorText(error), fix: "allow dynamodb:Query on the table's GSI1, or unset TABLE_NAME" };
  }
}

const errorText = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

/** One line per check; what to fix under each failure. */
export function formatPreflight(results: readonly CheckResult[]): string {
  const lines = results.flatMap((result) => [
    `${result.ok ? "ok  " : "FAIL"}  ${result.check}: ${result.detail}`,
    ...(result.ok || !result.fix ? [] : [`      fix: ${result.fix}`]),
  ]);
  const failed = results.filter((result) => !result.ok).length;
  lines.push(failed === 0 ? "preflight: all checks passed" : `preflight: ${failed} check(s) failed`);
  return lines.join("\n");
}
