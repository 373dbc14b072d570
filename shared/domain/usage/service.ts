import type { Caller } from "#shared/domain/caller";
import { ValidationError } from "#shared/domain/errors";
import { buildUsageReport, type CallsSource, type RunUsageFigures, type UsageQuery, type UsageReport } from "#shared/domain/usage/schema";

/** Most run items one usage read adds up (a bound on the request's work; a narrower range reads fewer). */
export const MAX_RUNS_PER_USAGE_READ = 50_000;

export interface UsageServiceDependencies {
  callsSource(): CallsSource;
  /** Calls per day of the range from the local gateway's counters. */
  callCounts(organizationId: string, from: string, to: string): Promise<Map<string, number>>;
  /** Calls per day of the range from the AWS usage plans of the organization's own key; undefined when it has none (not enrolled: a shared key). */
  usagePlanCalls(organizationId: string, from: string, to: string): Promise<Map<string, number> | undefined>;
  /** The runs metered in the range, or undefined past `maxRuns`. */
  runUsage(organizationId: string, from: string, to: string, maxRuns: number): Promise<RunUsageFigures[] | undefined>;
  /** Webhook delivery attempts per day of the range (days without attempts are absent). */
  webhookAttempts(organizationId: string, from: string, to: string): Promise<Map<string, number>>;
}

export function createUsageService(deps: UsageServiceDependencies) {
  return {
    /** The caller's own organization's usage, per UTC day and in total. */
    async report(caller: Pick<Caller, "organizationId">, query: UsageQuery): Promise<UsageReport> {
      const source = deps.callsSource();
      const [calls, runs, webhookAttempts] = await Promise.all([
        source === "local-gateway"
          ? deps.callCounts(caller.organizationId, query.from, query.to)
          : deps.usagePlanCalls(caller.organizationId, query.from, query.to),
        deps.runUsage(caller.organizationId, query.from, query.to, MAX_RUNS_PER_USAGE_READ),
        deps.webhookAttempts(caller.organizationId, query.from, query.to),
      ]);
      if (!runs)
        throw ValidationError.single(
          "to",
          `the range holds more than ${MAX_RUNS_PER_USAGE_READ} routing runs; ask for a shorter range`,
          "usage-400",
        );
      return buildUsageReport(caller.organizationId, query, source, calls, runs, webhookAttempts);
    },
  };
}

export type UsageService = ReturnType<typeof createUsageService>;
