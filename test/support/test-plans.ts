import type { Plan } from "#shared/domain/tenants/plans";

/** Plans the test suite's local runtime adds to the product's (as an operator would, see README "Tenants and plans"). */
export const testPlans = [
  { name: "test-5rps", description: "5 requests per second, no quota", rate: 5, burst: 5, maxRunsQueued: 5 },
  { name: "test-daily-20", description: "20 calls a day", rate: 100, burst: 100, callQuota: { limit: 20, period: "day" }, maxRunsQueued: 5 },
  { name: "test-monthly-15", description: "15 calls a month", rate: 100, burst: 100, callQuota: { limit: 15, period: "month" }, maxRunsQueued: 5 },
] as const satisfies readonly Plan[];
