import type { PlanCatalog } from "#shared/domain/tenants/plan-catalog";
import type { Plan, Tenant } from "#shared/domain/tenants/plans";

/**
 * Whether an organization may call the API, decided by the authorizer from its tenant record
 * (GetItem) and the auto-enroll setting. Pure: the authorizer reads, this decides.
 */
export type TenantAccess =
  | {
      allowed: true;
      plan: Plan;
      /** `enrolled`: a tenant record exists; `auto`: unknown organization let in on the default plan. */
      enrollment: "enrolled" | "auto";
      /** The usage-plan key API Gateway meters and throttles this call under (none locally: the local gateway meters by organization). */
      apiKeyValue?: string;
    }
  | { allowed: false; message: string; failedCode: string };

export const tenantFailedCodes = {
  notEnrolled: "tenant-403-not-enrolled",
  suspended: "tenant-403-suspended",
  unknownPlan: "tenant-403-plan",
  /** Over the plan's call quota (429; same as shared/http/gateway-responses.ts); the rate limit answers sys-429. */
  quotaExceeded: "sys-429-quota",
} as const;

/** Authorizer results are cached this long (seconds) unless the stack's context says otherwise. */
export const defaultAuthorizerCacheTtlSeconds = 300;

export interface TenantAccessSettings {
  plans: PlanCatalog;
  /** Let an organization without a tenant record in on the default plan (local runtime: on; stack: off by default). */
  autoEnroll: boolean;
  /** The usage-plan key auto-enrolled organizations share (the stack creates it on the default plan). */
  autoEnrollApiKeyValue: string;
}

/** Messages never hold a double quote or a backslash: the stack's ACCESS_DENIED response puts them in JSON as they are. */
export function tenantAccess(tenant: Tenant | undefined, settings: TenantAccessSettings): TenantAccess {
  if (!tenant) {
    if (!settings.autoEnroll) {
      return {
        allowed: false,
        message: "Organization not enrolled: ask the operator to enroll it on a plan.",
        failedCode: tenantFailedCodes.notEnrolled,
      };
    }
    return { allowed: true, plan: settings.plans.defaultPlan, enrollment: "auto", apiKeyValue: settings.autoEnrollApiKeyValue };
  }
  if (tenant.status === "suspended") {
    return {
      allowed: false,
      message: "The organization is suspended: ask the operator to resume it.",
      failedCode: tenantFailedCodes.suspended,
    };
  }
  // Enrolled means a key was made: a value on AWS, a reference only locally.
  if (!(tenant.apiKeyValue || tenant.apiKeyId)) {
    return {
      allowed: false,
      message: "The organization has no API key on this API: ask the operator to check its enrollment.",
      failedCode: tenantFailedCodes.unknownPlan,
    };
  }
  // A plan removed from the plans file leaves its tenants on the default plan (as every limit does,
  // planOf), never locked out; `npm run tenant -- retire-plan` moves their records and keys.
  const plan = settings.plans.named(tenant.plan) ?? settings.plans.defaultPlan;
  return { allowed: true, plan, enrollment: "enrolled", ...(tenant.apiKeyValue ? { apiKeyValue: tenant.apiKeyValue } : {}) };
}
