import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from "aws-lambda";
import { appConfig } from "#shared/config/env";
import { configuredPlans } from "#shared/config/tenant-plans";
import { UnauthorizedError } from "#shared/domain/errors";
import { tenantAccess } from "#shared/domain/tenants/access";
import { quotaExceededMessage } from "#shared/domain/tenants/plan-catalog";
import { authenticate, authorizerFailureMessage } from "#shared/http/authenticate";
import { authorizerContextOf } from "#shared/http/authorizer-context";
import { logger } from "#shared/observability/powertools";
import { findTenant } from "#shared/store/tenant-store";

/**
 * The tenant authorizer (REQUEST, identity source `Authorization`, results cached per token):
 * verifies the bearer JWT (shared/http/authenticate.ts, aws-jwt-verify), reads the organization's
 * tenant record (one GetItem) and either
 * - throws "Unauthorized" (API Gateway answers 401 through the UNAUTHORIZED gateway response),
 * - denies with the reason in its context (403 through ACCESS_DENIED: not enrolled, suspended), or
 * - allows the whole stage (the result is cached per token for every method) with the verified
 *   caller in its context and the tenant's usage-plan key as `usageIdentifierKey`, which API
 *   Gateway throttles and meters against the tenant's plan.
 * The local gateway invokes this very module in front of the handlers.
 */
type Result = APIGatewayAuthorizerResult & { usageIdentifierKey?: string };

/** `arn:…:execute-api:region:account:api/stage/METHOD/path` → `arn:…:execute-api:region:account:api/stage/*` (a cached answer serves every method). */
export function stageResource(methodArn: string): string {
  const [prefix, stage] = methodArn.split("/");
  return `${prefix}/${stage}/*`;
}

const policy = (effect: "Allow" | "Deny", resource: string) => ({
  Version: "2012-10-17",
  Statement: [{ Action: "execute-api:Invoke", Effect: effect, Resource: resource }],
});

const headerNamed = (headers: Record<string, string | undefined> | null, name: string) =>
  Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1];

/**
 * A token problem throws "Unauthorized" (401), which Lambda counts as an error like any other; the
 * authorizer's real failures (the tenant store, an unexpected error; an unreachable JWKS is logged
 * by authenticate) log `authorizer failure`, which the stack counts as its own metric
 * (`AuthorizerFailures`, alarm `AuthorizerFailure`), so bad tokens never raise an alarm.
 */
export async function handler(event: APIGatewayRequestAuthorizerEvent): Promise<Result> {
  try {
    return await authorize(event);
  } catch (error) {
    if (!(error instanceof Error && error.message === "Unauthorized"))
      logger.error(authorizerFailureMessage, { cause: "error", error: error instanceof Error ? error.name : String(error) });
    throw error;
  }
}

async function authorize(event: APIGatewayRequestAuthorizerEvent): Promise<Result> {
  let caller: Awaited<ReturnType<typeof authenticate>>;
  try {
    caller = await authenticate(headerNamed(event.headers, "authorization"));
  } catch (error) {
    // API Gateway's one way to answer 401 from a Lambda authorizer.
    if (error instanceof UnauthorizedError) throw new Error("Unauthorized");
    throw error;
  }
  const config = appConfig();
  const plans = configuredPlans();
  const tenant = await findTenant(caller.organizationId);
  const access = tenantAccess(tenant, {
    plans,
    autoEnroll: config.TENANT_AUTO_ENROLL === "true",
    autoEnrollApiKeyValue: config.TENANT_AUTO_ENROLL_API_KEY,
  });
  const resource = stageResource(event.methodArn);
  if (!access.allowed) {
    logger.info("tenant refused", { organizationId: caller.organizationId, failedCode: access.failedCode });
    return {
      principalId: caller.userId,
      policyDocument: policy("Deny", resource),
      context: { message: access.message, failedCode: access.failedCode },
    };
  }
  return {
    principalId: caller.userId,
    policyDocument: policy("Allow", resource),
    context: {
      ...authorizerContextOf(caller),
      plan: access.plan.name,
      enrollment: access.enrollment,
      // Read by the QUOTA_EXCEEDED gateway response: which quota, and when it resets.
      quotaExceededMessage: quotaExceededMessage(access.plan),
    },
    usageIdentifierKey: access.apiKeyValue,
  };
}
