import { TooManyRequestsError } from "#shared/domain/errors";
import type { PlanCatalog } from "#shared/domain/tenants/plan-catalog";
import type { Plan } from "#shared/domain/tenants/plans";
import { utcMonth } from "#shared/domain/usage/schema";

/**
 * The monthly run-seconds quota (plan.runSecondsPerMonth). A run may start only when its whole
 * time budget (the profile's timeLimitSeconds, the most the optimizer may use) still fits in what
 * the tenant has left this UTC month, so metered seconds never pass the quota by more than what
 * runs already queued together use (at most maxRunsQueued of them).
 */
export interface RunQuotaState {
  plan: Plan;
  /** Optimizer seconds metered this month so far. */
  usedSeconds: number;
}

/**
 * The tenant's plan in `catalog` (the plans in force: the product's and the operator's): the one its
 * tenant record names, else (no record, or a plan no longer configured) the catalog's default plan.
 */
export function planOf(planName: string | undefined, catalog: PlanCatalog): Plan {
  return (planName !== undefined ? catalog.named(planName) : undefined) ?? catalog.defaultPlan;
}

/** First instant of the next UTC month: when the month's run seconds reset. */
export function runQuotaResetsAt(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

/** Why a run of `budgetSeconds` may not start now, or undefined when it may. */
export function runQuotaRefusal(state: RunQuotaState, budgetSeconds: number, now: Date): string | undefined {
  const quota = state.plan.runSecondsPerMonth;
  if (quota === undefined || state.usedSeconds + budgetSeconds <= quota) return undefined;
  const used = Math.round(state.usedSeconds);
  return (
    `Monthly run-seconds quota reached: plan ${state.plan.name} allows ${quota} optimizer seconds per month, ` +
    `${used} are used in ${utcMonth(now)} and this run may use up to ${budgetSeconds}. ` +
    `The quota resets at ${runQuotaResetsAt(now).toISOString()}.`
  );
}

/** POST /routing/result over the monthly run-seconds quota. */
export class RunQuotaExceededError extends TooManyRequestsError {
  constructor(message: string) {
    super(message, RUN_QUOTA_FAILED_CODE);
  }
}

export const RUN_QUOTA_FAILED_CODE = "run-quota-429";

/** Port: the tenant's plan and what it used this month. */
export interface RunQuota {
  /** Why a run of `budgetSeconds` may not start now for the organization, or undefined. */
  refusal(organizationId: string, budgetSeconds: number, now: Date): Promise<string | undefined>;
}

/**
 * The monthly road-matrix cap (plan.travelElementsPerMonth): a run may ask a road-network provider for
 * `elements` more entries only when they fit in what the tenant has left this UTC month.
 */
export function travelElementsRefusal(plan: Plan, usedElements: number, elements: number, now: Date): string | undefined {
  const cap = plan.travelElementsPerMonth;
  if (cap === undefined || usedElements + elements <= cap) return undefined;
  return (
    `Monthly travel-elements cap reached: plan ${plan.name} allows ${cap} road-matrix elements per month, ` +
    `${usedElements} are used in ${utcMonth(now)} and this run needs ${elements} more. The cap resets at ${runQuotaResetsAt(now).toISOString()}.`
  );
}
