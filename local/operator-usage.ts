import { APIGatewayClient, GetUsagePlansCommand } from "@aws-sdk/client-api-gateway";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { usagePlanName } from "#shared/domain/tenants/plan-catalog";
import { plansDuring } from "#shared/domain/tenants/plan-history";
import type { Tenant } from "#shared/domain/tenants/plans";
import { buildUsageReport, type CallsSource, type UsageQuery, type UsageReport } from "#shared/domain/usage/schema";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { listTenants } from "#shared/store/tenant-store";
import { usagePlanCalls } from "#shared/tenancy/usage-plan-calls";
import { callCountsBetween, importUsageBetween, runUsageBetween, webhookAttemptsBetween } from "#shared/store/usage-store";

/**
 * What `npm run usage` reports to the operator who bills tenants: calls per day (the local
 * gateway's counters, or on AWS the usage plan's usage of the tenant's API key), routing runs per
 * day from the run usage items and webhook delivery attempts per day, with totals.
 */
export async function operatorUsageReport(
  organizationId: string,
  query: UsageQuery,
  callsSource: CallsSource,
  aws: UsagePlanReader = usagePlanReader(),
): Promise<UsageReport> {
  const [calls, runs, webhookAttempts] = await Promise.all([
    callsSource === "local-gateway" ? callCountsBetween(organizationId, query.from, query.to) : aws.calls(organizationId, query),
    runUsageBetween(organizationId, query.from, query.to, Number.MAX_SAFE_INTEGER),
    webhookAttemptsBetween(organizationId, query.from, query.to),
  ]);
  return buildUsageReport(organizationId, query, callsSource, calls, runs ?? [], webhookAttempts);
}

export interface UsagePlanReader {
  calls(organizationId: string, query: UsageQuery): Promise<Map<string, number>>;
}

/** Calls from API Gateway, for the stack `stackName` (STACK_NAME, default FieldOperations). */
export function usagePlanReader(
  stackName = process.env.STACK_NAME ?? "FieldOperations",
  client: APIGatewayClient = new APIGatewayClient({}),
): UsagePlanReader {
  return { calls: (organizationId, query) => usagePlanCallsOf(organizationId, query, client, stackName) };
}

/**
 * The calls API Gateway counted for the tenant's API key (its tenant record's `apiKeyId`), per day,
 * over every usage plan the key belonged to during the period (shared/tenancy/usage-plan-calls.ts);
 * plan periods recorded without a usage plan id are found by the usage plan's name (usagePlanName).
 */
export async function usagePlanCallsOf(
  organizationId: string,
  query: UsageQuery,
  client: APIGatewayClient = new APIGatewayClient({}),
  stackName = process.env.STACK_NAME ?? "FieldOperations",
): Promise<Map<string, number>> {
  const { Item } = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.tenant(organizationId) }));
  if (!Item || typeof Item.apiKeyId !== "string")
    throw new Error(`organization ${organizationId} has no tenant record with an API key in table ${tableName()}`);
  let byName: Map<string, string> | undefined;
  const usagePlanIdOf = async (plan: string) => {
    if (!byName) {
      byName = new Map();
      let position: string | undefined;
      do {
        const page = await client.send(new GetUsagePlansCommand({ position, limit: 500 }));
        for (const usagePlan of page.items ?? []) if (usagePlan.id && usagePlan.name) byName.set(usagePlan.name, usagePlan.id);
        position = page.position;
      } while (position);
    }
    return byName.get(usagePlanName(stackName, plan));
  };
  return usagePlanCalls(Item as unknown as Tenant, query.from, query.to, { client, usagePlanIdOf });
}

/** One tenant's line of the all-tenant export (`npm run usage -- --all`). */
export interface TenantUsageLine {
  organizationId: string;
  /** The plans it was on during the period, oldest first. */
  plans: string[];
  status: Tenant["status"];
  calls: number;
  runs: number;
  runSeconds: number;
  travelElements: number;
  webhookAttempts: number;
  imports: number;
  importRecords: number;
}

/**
 * Every enrolled tenant's usage over the period, for invoicing: the tenants index (paged; an
 * operator command, never a request path), then per tenant the same bounded reads as its report.
 */
export async function allTenantsUsage(
  query: UsageQuery,
  callsSource: CallsSource,
  aws: UsagePlanReader = usagePlanReader(),
): Promise<TenantUsageLine[]> {
  const lines: TenantUsageLine[] = [];
  for (const tenant of await listTenants()) {
    const [report, imports] = await Promise.all([
      operatorUsageReport(tenant.organizationId, query, callsSource, aws),
      importUsageBetween(tenant.organizationId, query.from, query.to),
    ]);
    lines.push({
      organizationId: tenant.organizationId,
      plans: plansDuring(tenant, query.from, query.to),
      status: tenant.status,
      calls: report.totals.calls ?? 0,
      runs: report.totals.runs.count,
      runSeconds: report.totals.runs.seconds,
      travelElements: report.totals.runs.travelElements,
      webhookAttempts: report.totals.webhookAttempts,
      imports: imports.imports,
      importRecords: imports.records,
    });
  }
  return lines.sort((a, b) => a.organizationId.localeCompare(b.organizationId));
}

export const tenantUsageColumns = [
  "organizationId",
  "plans",
  "status",
  "calls",
  "runs",
  "runSeconds",
  "travelElements",
  "webhookAttempts",
  "imports",
  "importRecords",
] as const satisfies readonly (keyof TenantUsageLine)[];

/** The export as CSV (RFC 4180: a header line, plans joined by `;`, fields quoted when they need it). */
export function formatTenantUsageCsv(lines: readonly TenantUsageLine[]): string {
  const field = (value: string | number) => {
    const text = String(value);
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  const row = (line: TenantUsageLine) =>
    tenantUsageColumns.map((column) => field(column === "plans" ? line.plans.join(";") : line[column])).join(",");
  return `${[tenantUsageColumns.join(","), ...lines.map(row)].join("\r\n")}\r\n`;
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
