import { configuredPlans } from "#shared/config/tenant-plans";
import { configuredTravelProviders } from "#shared/config/travel-providers";
import { travelProviderRefusal } from "#shared/domain/travel/spend";
import { planOf } from "#shared/domain/usage/run-quota";
import { tenantPlanName } from "#shared/store/usage-store";

/**
 * Why the organization's plan may not use `provider` (naming the providers it may), or undefined: checked
 * when a profile names one and when a run starts. Apart from shared/app/travel.ts so that the profile
 * functions do not bundle the engines and the cache.
 */
export async function travelProviderRefusalOf(organizationId: string, provider: string): Promise<string | undefined> {
  const plan = planOf(await tenantPlanName(organizationId), configuredPlans());
  return travelProviderRefusal(plan, Object.keys(configuredTravelProviders().providers), provider);
}
