import type { PlanPeriod, Tenant } from "#shared/domain/tenants/plans";

/**
 * A tenant's plan history (the tenant record's `planHistory`): what billing needs to sum the calls
 * API Gateway counted under each usage plan the tenant's key belonged to. Pure.
 */

/** The history as recorded, or for a record enrolled before histories existed its current plan since enrollment. */
export function planHistoryOf(tenant: Pick<Tenant, "plan" | "planHistory" | "createdTime">): PlanPeriod[] {
  return tenant.planHistory?.length ? tenant.planHistory : [{ plan: tenant.plan, from: tenant.createdTime }];
}

/** The history after a move to `plan` at `time`: the open period closed, a new one opened. Unchanged when already on it. */
export function historyAfterMove(
  tenant: Pick<Tenant, "plan" | "planHistory" | "createdTime">,
  plan: string,
  time: string,
  usagePlanId?: string,
): PlanPeriod[] {
  const history = planHistoryOf(tenant);
  const last = history.at(-1);
  if (last && last.plan === plan && last.to === undefined) return history;
  return [
    ...history.map((period) => (period.to === undefined ? { ...period, to: time } : period)),
    { plan, from: time, ...(usagePlanId ? { usagePlanId } : {}) },
  ];
}

/**
 * The plans the tenant was on at some time during the UTC days `from`…`to` (inclusive), oldest
 * first, each named once: the usage plans whose counts make up the tenant's calls of the period.
 */
export function plansDuring(tenant: Pick<Tenant, "plan" | "planHistory" | "createdTime">, from: string, to: string): string[] {
  const start = `${from}T00:00:00.000Z`;
  const end = `${to}T23:59:59.999Z`;
  const names: string[] = [];
  for (const period of planHistoryOf(tenant)) {
    const overlaps = period.from <= end && (period.to === undefined || period.to >= start);
    if (overlaps && !names.includes(period.plan)) names.push(period.plan);
  }
  return names;
}
