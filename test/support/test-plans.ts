import type { Plan } from "#shared/domain/tenants/plans";

/**
 * Plans the test suite's local runtime adds to the product's (as an operator would, see docs/operations.md
 * "Tenants and plans"). The suite's default plan (what auto-enrolled organizations, i.e. every test
 * that does not enroll its own, call on) is `test-roomy`: tests that create a hundred items at once
 * test those items, not the standard plan's burst of 100.
 */
export const testDefaultPlan = "test-roomy";

export const testPlans = [
  { name: "test-roomy", description: "the suite's default: far above any test's pace", rate: 10_000, burst: 5_000, maxRunsQueued: 5 },
  { name: "test-5rps", description: "5 requests per second, no quota", rate: 5, burst: 5, maxRunsQueued: 5 },
  {
    name: "test-daily-20",
    description: "20 calls a day",
    rate: 100,
    burst: 100,
    callQuota: { limit: 20, period: "day" },
    maxRunsQueued: 5,
  },
  {
    name: "test-monthly-15",
    description: "15 calls a month",
    rate: 100,
    burst: 100,
    callQuota: { limit: 15, period: "month" },
    maxRunsQueued: 5,
  },
  // Road-engine spend (test/http/road-spend.test.ts).
  {
    name: "test-city-roads",
    description: "fake-osrm and great circle only",
    rate: 10_000,
    burst: 5_000,
    maxRunsQueued: 5,
    travelProviders: ["fake-osrm"],
  },
  { name: "test-no-roads", description: "great circle only", rate: 10_000, burst: 5_000, maxRunsQueued: 5, travelProviders: [] },
  {
    name: "test-road-dollars",
    description: "$1 a month of priced-osrm",
    rate: 10_000,
    burst: 5_000,
    maxRunsQueued: 5,
    travelDollarsPerMonth: { "priced-osrm": 1 },
  },
  { name: "tiny", description: "3 run-seconds a month, 1 run queued", rate: 100, burst: 100, runSecondsPerMonth: 3, maxRunsQueued: 1 },
] as const satisfies readonly Plan[];
