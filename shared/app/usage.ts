import { appConfig } from "#shared/config/env";
import { configuredPlans } from "#shared/config/tenant-plans";
import { planOf, type RunQuota, runQuotaRefusal } from "#shared/domain/usage/run-quota";
import { createUsageService } from "#shared/domain/usage/service";
import { findTenant } from "#shared/store/tenant-store";
import { usagePlanCalls } from "#shared/tenancy/usage-plan-calls";
import { type RunUsage, utcMonth } from "#shared/domain/usage/schema";
import {
  callCountsBetween,
  recordRunUsage,
  runSecondsUsed,
  runUsageBetween,
  tenantPlanName,
  tenantPlanNames,
  webhookAttemptsBetween,
} from "#shared/store/usage-store";

/** Composition root of metering: the run quota, the runs cap by plan, the usage report and the run worker's meter. */

/** The run-seconds quota of the organization's plan (tenant record, else the default plan), among the plans in force (configuredPlans). */
export const runQuota: RunQuota = {
  async refusal(organizationId, budgetSeconds, now) {
    const [planName, usedSeconds] = await Promise.all([tenantPlanName(organizationId), runSecondsUsed(organizationId, utcMonth(now))]);
    return runQuotaRefusal({ plan: planOf(planName, configuredPlans()), usedSeconds }, budgetSeconds, now);
  },
};

/** The plan's `maxRunsQueued` for an enrolled organization; `unenrolled` (the configured cap) otherwise. */
export async function maxRunsQueued(organizationId: string, unenrolled: number): Promise<number> {
  const planName = await tenantPlanName(organizationId);
  return planName === undefined ? unenrolled : planOf(planName, configuredPlans()).maxRunsQueued;
}

/** `maxRunsQueued` of several organizations at once (batch reads of their tenant records): the scheduler tick's, once per page. */
export async function maxRunsQueuedOf(organizationIds: readonly string[], unenrolled: number): Promise<Map<string, number>> {
  const plans = await tenantPlanNames(organizationIds);
  return new Map(
    [...plans].map(([organizationId, planName]) => [
      organizationId,
      planName === undefined ? unenrolled : planOf(planName, configuredPlans()).maxRunsQueued,
    ]),
  );
}

/** Meters a run once (false when a redelivery finds it metered already). */
export function meterRun(usage: RunUsage): Promise<boolean> {
  return recordRunUsage(usage, utcMonth(new Date(`${usage.day}T00:00:00Z`)));
}

/** What the run used of memory: the Lambda's configured size, or locally the process's resident memory. */
export function runMemoryMb(): number {
  return appConfig().AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? Math.round(process.memoryUsage().rss / 1_048_576);
}

export const usageService = createUsageService({
  callsSource: () => appConfig().USAGE_CALLS_SOURCE,
  callCounts: callCountsBetween,
  usagePlanCalls: async (organizationId, from, to) => {
    const tenant = await findTenant(organizationId);
    // An organization without a tenant record (auto-enrolled) shares one key: its calls are not its own.
    if (!tenant?.apiKeyId || tenant.apiKeyId.startsWith("local-")) return undefined;
    return usagePlanCalls(tenant, from, to);
  },
  runUsage: runUsageBetween,
  webhookAttempts: webhookAttemptsBetween,
});
