import { readFileSync } from "node:fs";
import { type PlanCatalog, planCatalog } from "#shared/domain/tenants/plan-catalog";

/**
 * The plan catalog of this process: the product plans plus the operator's document
 * (`{ "defaultPlan"?, "plans": [...] }`), the one source of every limit (the authorizer's usage-plan
 * key, the run-seconds quota, the runs cap, imports). Read from, first found:
 * - the document fixed at synth time and bundled into every function (`BUNDLED_TENANT_PLANS`, an
 *   esbuild `define` set by infra/bundling.ts): on AWS every function that enforces a limit sees the
 *   same plans, with no Lambda environment variable (4 KB for all of a function's variables);
 * - `TENANT_PLANS_JSON` (the document itself: the local runtime and tests);
 * - `TENANT_PLANS_FILE` (a path: `npm start`, the tenant CLI and `cdk synth` read it).
 */
declare const BUNDLED_TENANT_PLANS: string | undefined;

let cached: PlanCatalog | undefined;

export function planOverridesFromEnvironment(environment: NodeJS.ProcessEnv = process.env): unknown {
  if (typeof BUNDLED_TENANT_PLANS !== "undefined") return JSON.parse(BUNDLED_TENANT_PLANS);
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
