import { ConflictError, NotFoundError, ValidationError } from "#shared/domain/errors";
import type { PlanCatalog } from "#shared/domain/tenants/plan-catalog";
import { historyAfterMove } from "#shared/domain/tenants/plan-history";
import type { Tenant } from "#shared/domain/tenants/plans";
import { findTenant, insertTenant, listTenants, updateTenant } from "#shared/store/tenant-store";

/**
 * The operator's tenant lifecycle (`npm run tenant`): enroll an organization on a plan, move it to
 * another, suspend and resume it, list them. The usage-plan keys live behind TenantApiKeys: API
 * Gateway on AWS (shared/tenancy/api-gateway-keys.ts), a generated value locally (the local
 * gateway meters by organization).
 */
export interface TenantApiKeys {
  /**
   * A new key for the organization, attached to `plan`'s usage plan: on AWS its id and value (the
   * authorizer hands the value to API Gateway); locally a reference only (no value exists).
   */
  create(organizationId: string, plan: string): Promise<{ apiKeyId?: string; apiKeyValue?: string; usagePlanId?: string }>;
  /**
   * Leaves the tenant's key attached to `toPlan`'s usage plan and to no other plan of the stack,
   * whatever it was attached to before (nothing, a deleted plan, several: a repair). A failure part
   * way leaves the key on exactly one working usage plan, the old one or the new one.
   */
  move(tenant: Tenant, toPlan: string): Promise<{ usagePlanId?: string }>;
  /** Turns the tenant's key on or off (off: API Gateway refuses it at once, before the authorizer cache expires). */
  setEnabled(tenant: Tenant, enabled: boolean): Promise<void>;
  /** Removes a key created for an enrollment that did not happen. */
  remove(apiKeyId: string | undefined): Promise<void>;
}

export interface TenantOperations {
  plans: PlanCatalog;
  apiKeys: TenantApiKeys;
  now?: () => Date;
}

const knownPlan = (plans: PlanCatalog, name: string) => {
  const plan = plans.named(name);
  if (!plan) throw ValidationError.single("plan", `no plan named ${name}; plans: ${plans.plans.map((each) => each.name).join(", ")}`);
  return plan;
};

const requireTenant = async (organizationId: string) => {
  const tenant = await findTenant(organizationId);
  if (!tenant) throw new NotFoundError("tenant-404");
  return tenant;
};

export async function enrollTenant(organizationId: string, planName: string | undefined, operations: TenantOperations): Promise<Tenant> {
  const plan = planName === undefined ? operations.plans.defaultPlan : knownPlan(operations.plans, planName);
  if (await findTenant(organizationId)) throw new ConflictError(`The organization ${organizationId} is enrolled already.`, "tenant-409");
  const { usagePlanId, ...key } = await operations.apiKeys.create(organizationId, plan.name);
  const time = (operations.now?.() ?? new Date()).toISOString();
  const tenant: Tenant = {
    organizationId,
    plan: plan.name,
    planHistory: [{ plan: plan.name, from: time, ...(usagePlanId ? { usagePlanId } : {}) }],
    status: "active",
    ...key,
    createdTime: time,
    updatedTime: time,
  };
  if (!(await insertTenant(tenant))) {
    await operations.apiKeys.remove(key.apiKeyId);
    throw new ConflictError(`The organization ${organizationId} is enrolled already.`, "tenant-409");
  }
  return tenant;
}

/**
 * Moves the tenant to `planName` — its key first, the record last, so the record never names a plan
 * its key is not on. To the plan it is on already, it repairs the key's association (reattached
 * when missing, e.g. after its usage plan was deleted) and changes nothing in the record.
 */
export async function changeTenantPlan(organizationId: string, planName: string, operations: TenantOperations): Promise<Tenant> {
  const plan = knownPlan(operations.plans, planName);
  const tenant = await requireTenant(organizationId);
  const { usagePlanId } = await operations.apiKeys.move(tenant, plan.name);
  if (tenant.plan === plan.name) return tenant;
  const time = (operations.now?.() ?? new Date()).toISOString();
  const planHistory = historyAfterMove(tenant, plan.name, time, usagePlanId);
  const updated = await updateTenant(organizationId, { plan: plan.name, planHistory }, time);
  if (!updated) throw new NotFoundError("tenant-404");
  return updated;
}

/**
 * Moves every tenant on `fromPlan` to `toPlan` (the default plan when omitted): what an operator
 * runs before removing or renaming a plan in the plans file, or after, to reattach keys whose usage
 * plan the stack deleted. `fromPlan` need not be configured any more. Paged through the tenants
 * index (an operator command, not a request path); returns the tenants moved.
 */
export async function retirePlan(fromPlan: string, toPlan: string | undefined, operations: TenantOperations): Promise<Tenant[]> {
  const target = toPlan === undefined ? operations.plans.defaultPlan : knownPlan(operations.plans, toPlan);
  if (target.name === fromPlan) throw ValidationError.single("to", `cannot retire ${fromPlan} to itself`);
  const moved: Tenant[] = [];
  for (const tenant of await listTenants()) {
    if (tenant.plan !== fromPlan) continue;
    moved.push(await changeTenantPlan(tenant.organizationId, target.name, operations));
  }
  return moved;
}

export async function setTenantStatus(organizationId: string, status: Tenant["status"], operations: TenantOperations): Promise<Tenant> {
  const tenant = await requireTenant(organizationId);
  await operations.apiKeys.setEnabled(tenant, status === "active");
  const updated = await updateTenant(organizationId, { status }, (operations.now?.() ?? new Date()).toISOString());
  if (!updated) throw new NotFoundError("tenant-404");
  return updated;
}

export { findTenant, listTenants };
