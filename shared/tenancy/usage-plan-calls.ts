import { APIGatewayClient, GetUsageCommand, GetUsagePlansCommand } from "@aws-sdk/client-api-gateway";
import { plansDuring, planHistoryOf } from "#shared/domain/tenants/plan-history";
import type { Tenant } from "#shared/domain/tenants/plans";
import { daysOf } from "#shared/domain/usage/schema";

/**
 * The calls API Gateway counted for a tenant's API key, per UTC day of `from`…`to`, summed over
 * every usage plan the key belonged to in the period: the usage plans recorded in the tenant's plan
 * history (`usagePlanId`, written on AWS by create/set-plan/retire-plan) for the periods that
 * overlap it, `usagePlanIdOf(plan)` for periods recorded without one (the operator's CLI resolves
 * them by name; the API's function has no such lookup), and the usage plans the key is on now. A
 * usage plan keeps a key's counts after the key leaves it; one the stack deleted took them with it.
 * Reads only: GetUsagePlans (by key) and GetUsage (`apigateway:GET` on /usageplans and
 * /usageplans/{id}/usage).
 */
export async function usagePlanCalls(
  tenant: Pick<Tenant, "apiKeyId" | "plan" | "planHistory" | "createdTime">,
  from: string,
  to: string,
  options: { client?: APIGatewayClient; usagePlanIdOf?: (plan: string) => Promise<string | undefined> } = {},
): Promise<Map<string, number>> {
  const keyId = tenant.apiKeyId;
  if (!keyId) throw new Error("the tenant record has no API key id");
  const client = options.client ?? new APIGatewayClient({});
  const usagePlanIds = new Set<string>();
  const inPeriod = new Set(plansDuring(tenant, from, to));
  const start = `${from}T00:00:00.000Z`;
  const end = `${to}T23:59:59.999Z`;
  for (const period of planHistoryOf(tenant)) {
    if (!inPeriod.has(period.plan) || period.from > end || (period.to !== undefined && period.to < start)) continue;
    const id = period.usagePlanId ?? (await options.usagePlanIdOf?.(period.plan));
    if (id) usagePlanIds.add(id);
  }
  let position: string | undefined;
  do {
    const page = await client.send(new GetUsagePlansCommand({ keyId, position, limit: 500 }));
    for (const plan of page.items ?? []) if (plan.id) usagePlanIds.add(plan.id);
    position = page.position;
  } while (position);

  const days = daysOf(from, to);
  const calls = new Map<string, number>();
  for (const usagePlanId of usagePlanIds) {
    let page: string | undefined;
    do {
      const usage = await client.send(
        new GetUsageCommand({ usagePlanId, keyId, startDate: from, endDate: to, position: page, limit: 500 }),
      );
      // items: { <keyId>: [[used, remaining], …] }, one pair per day from startDate.
      (usage.items?.[keyId] ?? []).forEach(([used], index) => {
        const day = days[index];
        if (day !== undefined) calls.set(day, (calls.get(day) ?? 0) + Number(used ?? 0));
      });
      page = usage.position;
    } while (page);
  }
  return calls;
}
