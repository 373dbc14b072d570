import { describe, expect, it } from "vitest";
import { LocalUsagePlans } from "#local/usage-plans";
import { planCatalog } from "#shared/domain/tenants/plan-catalog";
import { newOrganizationId } from "#test/support/local-api";

/**
 * The local gateway's usage plans when the store does not take the call's count: API Gateway applies
 * quotas on a best-effort basis and never fails a call over its own counting, so neither does the
 * emulation (local/usage-plans.ts). A counter write that fails admits the call; throttling, kept in
 * memory, still refuses. The counters go to DYNAMODB_LOCAL_ENDPOINT when it differs from the
 * product's endpoint: here a port nothing listens on (this file's process only).
 */
process.env.DYNAMODB_LOCAL_ENDPOINT = "http://127.0.0.1:9";

const plans = planCatalog({
  plans: [
    {
      name: "counted",
      description: "a daily quota, a burst of 3",
      rate: 1,
      burst: 3,
      maxRunsQueued: 1,
      callQuota: { limit: 100, period: "day" },
    },
  ],
});

describe("Local usage plans: counting is best effort", () => {
  it("admits calls whose count the store could not take, and still throttles past the burst", async () => {
    const now = new Date("2026-03-02T06:00:00Z");
    const usage = new LocalUsagePlans(plans, () => now);
    const organizationId = newOrganizationId();
    const answers = [];
    for (let call = 0; call < 4; call++) answers.push(await usage.admit(organizationId, "counted"));
    expect(answers.slice(0, 3)).toEqual([{ admitted: true }, { admitted: true }, { admitted: true }]);
    expect(answers[3]).toMatchObject({ admitted: false, statusCode: 429, body: { status: false, failedCode: "sys-429" } });
  });
});
