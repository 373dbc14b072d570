import { describe, expect, it } from "vitest";
import { placeholderJwt } from "#infra/placeholders";
import {
  apiConcurrencyHeadroom,
  backgroundConcurrency,
  type CheckResult,
  formatPreflight,
  type JwksFetch,
  lambdaUnreservedMinimum,
  type PreflightAws,
  runPreflight,
} from "#local/preflight";
import { defaultRunWorkerMemoryMb } from "#shared/queue/definitions";

const issuer = { issuer: "https://idp.example.com", audience: "field-operations", jwksUri: "https://idp.example.com/jwks.json" };
const settings = { stackName: "FieldOperations", issuers: [issuer] };
const roleArn = "arn:aws:iam::111122223333:role/ApiGatewayLogs";
const needed = backgroundConcurrency() + apiConcurrencyHeadroom + lambdaUnreservedMinimum;

/** A healthy account; each test breaks one thing. */
function stubAws(overrides: Partial<PreflightAws> = {}): PreflightAws {
  return {
    callerIdentity: async () => ({ account: "111122223333", arn: "arn:aws:sts::111122223333:assumed-role/Deployer/me" }),
    region: async () => "eu-west-1",
    apiGatewayCloudWatchRoleArn: async () => roleArn,
    roleExists: async () => true,
    lambdaConcurrency: async () => ({ limit: 1000, unreserved: 1000 }),
    lambdaMemoryQuotaMb: async () => 10_240,
    bootstrapVersion: async () => 28,
    deployedTemplate: async () => undefined,
    ...overrides,
  };
}
const goodJwks: JwksFetch = async () => ({ status: 200, body: { keys: [{ kty: "RSA", use: "sig", kid: "1", n: "x", e: "AQAB" }] } });
const run = (aws: PreflightAws | undefined, fetchJwks: JwksFetch = goodJwks, extra: Partial<Parameters<typeof runPreflight>[0]> = {}) =>
  runPreflight({ ...settings, ...extra }, { ...(aws ? { aws } : {}), fetchJwks });
const named = (results: CheckResult[], check: string) => {
  const result = results.find((each) => each.check.startsWith(check));
  if (!result) throw new Error(`no check ${check} in ${results.map((each) => each.check).join(", ")}`);
  return result;
};
const denied = async (): Promise<never> => {
  throw Object.assign(new Error("not authorized"), { name: "AccessDeniedException" });
};

describe("npm run preflight -- --aws (stubbed AWS SDK)", () => {
  it("passes every check on a healthy account, and says so", async () => {
    const results = await run(stubAws());
    expect(results.map((result) => result.check)).toEqual([
      "credentials",
      "region",
      "API Gateway CloudWatch role",
      "Lambda concurrency",
      "Lambda memory",
      "CDK bootstrap",
      `JWKS of ${issuer.issuer}`,
    ]);
    expect(results.filter((result) => !result.ok)).toEqual([]);
    expect(formatPreflight(results)).toMatch(/all checks passed$/);
  });

  it("credentials: fails with what to configure, and stops before reading the account", async () => {
    let read = false;
    const results = await run(
      stubAws({
        callerIdentity: async () => {
          throw Object.assign(new Error("Could not load credentials from any providers"), { name: "CredentialsProviderError" });
        },
        apiGatewayCloudWatchRoleArn: async () => {
          read = true;
          return undefined;
        },
      }),
    );
    expect(named(results, "credentials")).toMatchObject({ ok: false, fix: expect.stringContaining("AWS_PROFILE") });
    expect(read).toBe(false);
    expect(formatPreflight(results)).toContain("fix: configure AWS credentials");
  });

  it("region: fails without one", async () => {
    const results = await run(stubAws({ region: async () => undefined }));
    expect(named(results, "region")).toMatchObject({ ok: false, fix: expect.stringContaining("AWS_REGION") });
  });

  it("CloudWatch role: a set, existing role passes; none set passes (the stack sets its own); unreadable fails", async () => {
    expect(named(await run(stubAws()), "API Gateway").detail).toContain(roleArn);
    const unset = named(await run(stubAws({ apiGatewayCloudWatchRoleArn: async () => undefined })), "API Gateway");
    expect(unset).toMatchObject({ ok: true, detail: expect.stringContaining("will set its own") });
    const dangling = named(await run(stubAws({ roleExists: async () => false })), "API Gateway");
    expect(dangling).toMatchObject({ ok: true, detail: expect.stringContaining("no longer exists") });
    expect(named(await run(stubAws({ apiGatewayCloudWatchRoleArn: denied })), "API Gateway")).toMatchObject({
      ok: false,
      fix: expect.stringContaining("apigateway:GET"),
    });
  });

  it("CloudWatch role: an install holding ApiAccount/ApiCloudWatchRole unretained fails with the upgrade step", async () => {
    const legacy = JSON.stringify({
      Resources: {
        ApiCloudWatchRole73EC6FC4: { Type: "AWS::IAM::Role", DeletionPolicy: "Delete" },
        ApiAccountA18C9B29: { Type: "AWS::ApiGateway::Account", DeletionPolicy: "Delete" },
      },
    });
    const failing = named(await run(stubAws({ deployedTemplate: async () => legacy })), "API Gateway");
    expect(failing).toMatchObject({ ok: false, fix: expect.stringContaining("-c apiGatewayAccountRole=true") });
    expect(failing.detail).toContain("ApiCloudWatchRole73EC6FC4");
    const retained = legacy.replaceAll('"Delete"', '"Retain"');
    expect(named(await run(stubAws({ deployedTemplate: async () => retained })), "API Gateway").ok).toBe(true);
  });

  it("Lambda concurrency: a new account's reduced quota fails with the figure to request", async () => {
    expect(needed).toBeGreaterThan(200);
    const low = named(await run(stubAws({ lambdaConcurrency: async () => ({ limit: 10, unreserved: 10 }) })), "Lambda concurrency");
    expect(low).toMatchObject({ ok: false, fix: expect.stringContaining(`≥ ${needed}`) });
    expect(
      named(await run(stubAws({ lambdaConcurrency: async () => ({ limit: needed, unreserved: needed }) })), "Lambda concurrency").ok,
    ).toBe(true);
    // A smaller worker limit needs less.
    const smaller = await run(stubAws({ lambdaConcurrency: async () => ({ limit: needed - 10, unreserved: 0 }) }), goodJwks, {
      runWorkerMaxConcurrency: 10,
    });
    expect(named(smaller, "Lambda concurrency").ok).toBe(true);
    expect(named(await run(stubAws({ lambdaConcurrency: denied })), "Lambda concurrency")).toMatchObject({ ok: false });
  });

  it("Lambda memory: a quota below the run worker's memory fails with the context flag to lower it", async () => {
    const low = named(await run(stubAws({ lambdaMemoryQuotaMb: async () => 1024 })), "Lambda memory");
    expect(low).toMatchObject({ ok: false, fix: expect.stringContaining("-c runWorkerMemoryMb=1024") });
    expect(low.detail).toContain(String(defaultRunWorkerMemoryMb));
    expect(named(await run(stubAws({ lambdaMemoryQuotaMb: async () => undefined })), "Lambda memory").ok).toBe(true);
    expect(
      named(await run(stubAws({ lambdaMemoryQuotaMb: async () => 1024 }), goodJwks, { runWorkerMemoryMb: 1024 }), "Lambda memory").ok,
    ).toBe(true);
  });

  it("CDK bootstrap: missing or too old fails with the bootstrap command", async () => {
    const missing = named(await run(stubAws({ bootstrapVersion: async () => undefined })), "CDK bootstrap");
    expect(missing).toMatchObject({ ok: false, fix: "npx cdk bootstrap aws://111122223333/eu-west-1" });
    expect(named(await run(stubAws({ bootstrapVersion: async () => 5 })), "CDK bootstrap").ok).toBe(false);
  });

  it("JWKS: unreachable, not a key set, or the placeholder fails; checked without --aws too", async () => {
    const unreachable = named(
      await run(undefined, async () => {
        throw new TypeError("fetch failed");
      }),
      "JWKS",
    );
    expect(unreachable).toMatchObject({ ok: false, detail: expect.stringContaining("fetch failed") });
    expect(named(await run(undefined, async () => ({ status: 404, body: undefined })), "JWKS")).toMatchObject({ ok: false });
    expect(named(await run(undefined, async () => ({ status: 200, body: { keys: [] } })), "JWKS").ok).toBe(false);
    const placeholder = await run(undefined, goodJwks, { issuers: [placeholderJwt] });
    expect(named(placeholder, "JWKS")).toMatchObject({ ok: false, detail: expect.stringContaining("placeholder") });
    expect(named(await run(undefined), "JWKS").ok).toBe(true);
  });

  it("tenant plans: tenants on a plan the plans file lacks fail with the retire-plan command; all on known plans pass", async () => {
    const tenantPlans = async () => [
      { organizationId: "org-1", plan: "standard" },
      { organizationId: "org-2", plan: "gold" },
      { organizationId: "org-3", plan: "gold" },
    ];
    const orphaned = named(await run(stubAws({ tenantPlans }), goodJwks, { planNames: ["free", "standard"] }), "tenant plans");
    expect(orphaned).toMatchObject({
      ok: false,
      detail: "tenants on plans the plans file lacks: gold (2)",
      fix: "npm run tenant -- retire-plan gold --to <plan> --aws",
    });
    expect(named(await run(stubAws({ tenantPlans }), goodJwks, { planNames: ["standard", "gold"] }), "tenant plans").ok).toBe(true);
    expect(named(await run(stubAws({ tenantPlans: denied }), goodJwks, { planNames: ["standard"] }), "tenant plans").ok).toBe(false);
  });
});
