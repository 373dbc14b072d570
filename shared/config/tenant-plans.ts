import { readFileSync } from "node:fs";
import { type PlanCatalog, planCatalog } from "#shared/domain/tenants/plan-catalog";

/**
 * The plan catalog of this process: the product plans plus the operator's overrides, read from
 * `TENANT_PLANS_JSON` (the document itself; the CDK stack sets it on the authorizer) or
 * `TENANT_PLANS_FILE` (a path; `npm start`, the tenant CLI and `cdk synth` read it).
 */
let cached: PlanCatalog | undefined;

export function planOverridesFromEnvironment(environment: NodeJS.ProcessEnv = process.env): unknown {
  if (environment.TENANT_PLANS_JSON) return JSON.parse(environment.TENANT_PLANS_JSON);
  if (environment.TENANT_PLANS_FILE) return JSON.parse(readFileSync(environment.TENANT_PLANS_FILE, "utf8"));
  return {};
}

export function configuredPlans(): PlanCatalog {
  cached ??= planCatalog(planOverridesFromEnvironment());
  return cached;
}

export function resetConfiguredPlans(): void {
  cached = undefined;
}
