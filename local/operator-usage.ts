import { APIGatewayClient, GetUsageCommand, GetUsagePlansCommand } from "@aws-sdk/client-api-gateway";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { buildUsageReport, type CallsSource, daysOf, type UsageQuery, type UsageReport } from "#shared/domain/usage/schema";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { callCountsBetween, runUsageBetween, webhookAttemptsBetween } from "#shared/store/usage-store";

/**
 * What `npm run usage` reports to the operator who bills tenants: calls per day (the local
 * gateway's counters, or on AWS the usage plan's usage of the tenant's API key), routing runs per
 * day from the run usage items and webhook delivery attempts per day, with totals.
 */
export async function operatorUsageReport(organizationId: string, query: UsageQuery, callsSource: CallsSource): Promise<UsageReport> {
  const [calls, runs, webhookAttempts] = await Promise.all([
    callsSource === "local-gateway" ? callCountsBetween(organizationId, query.from, query.to) : usagePlanCalls(organizationId, query),
    runUsageBetween(organizationId, query.from, query.to, Number.MAX_SAFE_INTEGER),
    webhookAttemptsBetween(organizationId, query.from, query.to),
  ]);
  return buildUsageReport(organizationId, query, callsSource, calls, runs ?? [], webhookAttempts);
}

/**
 * The calls API Gateway counted for the tenant's API key (its tenant record's `apiKeyId`), per day,
 * summed over the usage plans the key belongs to (one, unless the operator moved it meanwhile).
 */
export async function usagePlanCalls(
  organizationId: string,
  query: UsageQuery,
  client = new APIGatewayClient({}),
): Promise<Map<string, number>> {
  const tenant = await documentClient().send(
    new GetCommand({ TableName: tableName(), Key: keys.tenant(organizationId), ProjectionExpression: "apiKeyId" }),
  );
  const keyId = tenant.Item?.apiKeyId;
  if (typeof keyId !== "string")
    throw new Error(`organization ${organizationId} has no tenant record with an API key in table ${tableName()}`);
  const days = daysOf(query.from, query.to);
  const calls = new Map<string, number>();
  const plans = await client.send(new GetUsagePlansCommand({ keyId, limit: 500 }));
  for (const plan of plans.items ?? []) {
    let position: string | undefined;
    do {
      const usage = await client.send(
        new GetUsageCommand({ usagePlanId: plan.id as string, keyId, startDate: query.from, endDate: query.to, position, limit: 500 }),
      );
      // items: { <keyId>: [[used, remaining], …] }, one pair per day from startDate.
      (usage.items?.[keyId] ?? []).forEach(([used], index) => {
        const day = days[index];
        if (day !== undefined) calls.set(day, (calls.get(day) ?? 0) + Number(used ?? 0));
      });
      position = usage.position;
    } while (position);
  }
  return calls;
}

/** The report as a table: one line per day, then the totals. */
export function formatUsageTable(report: UsageReport): string {
  const source = report.callsSource === "local-gateway" ? "the local gateway's counters" : "the API Gateway usage plan";
  const row = (day: string, calls: number | null, count: number, seconds: number, webhookAttempts: number) =>
    `${day.padEnd(10)}  ${String(calls ?? "-").padStart(10)}  ${String(count).padStart(6)}  ${seconds.toFixed(3).padStart(13)}  ${String(webhookAttempts).padStart(16)}`;
  return [
    `Usage of organization ${report.organizationId}, ${report.from} to ${report.to} (UTC days; calls from ${source})`,
    `${"day".padEnd(10)}  ${"calls".padStart(10)}  ${"runs".padStart(6)}  ${"run seconds".padStart(13)}  ${"webhook attempts".padStart(16)}`,
    ...report.days.map((day) => row(day.day, day.calls, day.runs.count, day.runs.seconds, day.webhookAttempts)),
    row("total", report.totals.calls, report.totals.runs.count, report.totals.runs.seconds, report.totals.webhookAttempts),
    "",
  ].join("\n");
}
