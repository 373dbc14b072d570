import { ALWAYS_ON_SHIFT } from "#test/support/shifts";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { runSecondsUsed, runUsageItemsBetween } from "#shared/store/usage-store";
import { meterAttempt } from "#shared/store/webhook-delivery-store";
import { apiClient, newTenant, tokenFor } from "#test/support/local-api";
import { created, deliverRuns } from "#test/support/on-demand-runs";
import { refusal } from "#test/support/refusals";

/**
 * Metering through the local gateway: GET /v3/usage, run usage written by the run worker (the test
 * hands the queued run messages to it, twice to redeliver), the plan's run-seconds quota and runs cap.
 */
const utcDay = (instant: Date) => instant.toISOString().slice(0, 10);
const today = () => utcDay(new Date());
const dayAfter = (day: string, days = 1) => utcDay(new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000));

async function organizationWithProfile() {
  const tenant = newTenant();
  const hub = await created(tenant.api, "/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
  for (const name of ["Van 1", "Van 2"]) await created(tenant.api, "/vehicle", { name, hubId: hub._id, workingTime: ALWAYS_ON_SHIFT });
  for (let i = 0; i < 3; i++)
    await created(tenant.api, "/visit", { hubId: hub._id, name: `Stop ${i + 1}`, coordinate: `${-6.2 + 0.01 * (i + 1)},106.8` });
  const profile = await created(tenant.api, "/routing/configuration", { name: "Plan", hubId: hub._id, timeLimitSeconds: 1 });
  return { ...tenant, hub, profile };
}

const put = (item: Record<string, unknown>) => documentClient().send(new PutCommand({ TableName: tableName(), Item: item }));
const seedCalls = (organizationId: string, day: string, calls: number) => put({ ...keys.callCounter(organizationId, day), calls });
const seedMonthSeconds = (organizationId: string, seconds: number) =>
  put({ ...keys.runSecondsTotal(organizationId, new Date().toISOString().slice(0, 7)), seconds });
/** The tenant record the operator's CLI writes (overwrites one written by auto-enrollment). */
const seedTenant = (organizationId: string, plan: string) =>
  put({
    ...keys.tenant(organizationId),
    GSI1PK: keys.tenantsIndexPartition,
    GSI1SK: organizationId,
    entity: "tenant",
    organizationId,
    plan,
    status: "active",
    createdTime: "2026-01-01 00:00:00",
    updatedTime: "2026-01-01 00:00:00",
  });

const nextMonthStart = () => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
};

describe("GET /v3/usage and run metering (local gateway)", () => {
  it("meters each run once — a redelivered run message counts nothing more — and the report adds runs to the call counters of each day", async () => {
    const tenant = await organizationWithProfile();
    const first = await created(tenant.api, "/routing/result", { configurationId: tenant.profile._id });
    const second = await created(tenant.api, "/routing/result", { configurationId: tenant.profile._id });
    await deliverRuns([first._id, second._id], { deliveries: 2 });
    for (const id of [first._id, second._id]) expect((await tenant.api.get(`/routing/result/${id}`)).body.data.status).toBe("done");

    // Prepare: call counters of two past days (and one outside the range), as the local gateway writes them.
    const start = dayAfter(today(), -3);
    await seedCalls(tenant.organizationId, start, 7);
    await seedCalls(tenant.organizationId, dayAfter(start), 3);
    await seedCalls(tenant.organizationId, dayAfter(start, -1), 1000);

    // Assess: one usage item per run, and the month's total is their sum.
    const runs = await runUsageItemsBetween(tenant.organizationId, start, dayAfter(today()));
    expect(runs.map((run) => run.runId).sort()).toEqual([first._id, second._id].sort());
    for (const run of runs) {
      expect(run).toMatchObject({
        organizationId: tenant.organizationId,
        kind: "onDemand",
        scheduleId: null,
        hubId: tenant.hub._id,
        configurationId: tenant.profile._id,
        outcome: "done",
        visits: 3,
        vehicles: 2,
      });
      expect(run.optimizerSeconds).toBeGreaterThan(0);
      expect(run.memoryMb).toBeGreaterThan(0);
    }
    const seconds = runs.reduce((sum, run) => sum + run.optimizerSeconds, 0);
    expect(await runSecondsUsed(tenant.organizationId, new Date().toISOString().slice(0, 7))).toBeCloseTo(seconds, 3);

    // Act: the range from the first seeded day to tomorrow (a run started just before midnight is on its own day).
    const response = await tenant.api.get(`/usage?from=${start}&to=${dayAfter(today())}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const report = response.body.data;
    expect(report).toMatchObject({
      organizationId: tenant.organizationId,
      from: start,
      to: dayAfter(today()),
      callsSource: "local-gateway",
    });
    expect(report.days.map((day: { day: string }) => day.day)).toEqual([0, 1, 2, 3, 4].map((i) => dayAfter(start, i)));
    expect(report.days.slice(0, 2).map((day: { calls: number }) => day.calls)).toEqual([7, 3]);
    expect(report.days.reduce((sum: number, day: { runs: { count: number } }) => sum + day.runs.count, 0)).toBe(2);
    expect(report.totals.runs.count).toBe(2);
    expect(report.totals.runs.seconds).toBeCloseTo(seconds, 2);
    // Calls of today and tomorrow are whatever the local gateway counted; the total is the days' sum.
    expect(report.totals.calls).toBe(report.days.reduce((sum: number, day: { calls: number }) => sum + day.calls, 0));
    expect(report.totals.calls).toBeGreaterThanOrEqual(10);
  });

  it("counts exactly the calls the local gateway accepted, the usage call itself included", async () => {
    const tenant = newTenant();
    for (let call = 0; call < 5; call += 1) expect((await tenant.api.get("/vehicles")).status).toBe(200);
    expect(refusal(await tenant.api.get("/vehicle/000000000000000000000000"))).toEqual({ status: 404, failedCode: "sys-404" });
    // Yesterday to tomorrow, so a run across midnight still sums to the same total.
    const response = await tenant.api.get(`/usage?from=${dayAfter(today(), -1)}&to=${dayAfter(today())}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    // Six calls before (a 404 is a billed call too) and the usage call, counted when the gateway admitted it.
    expect(response.body.data.totals.calls).toBe(7);
    expect(response.body.data.totals.runs).toEqual({ count: 0, seconds: 0, travelElements: 0 });
  });

  it("shows the webhook delivery attempts metered per day, and their total", async () => {
    const tenant = newTenant();
    const start = dayAfter(today(), -3);
    // As the delivery worker meters them (shared/app/webhook-events.ts): one counter item per UTC day.
    for (let i = 0; i < 3; i++) await meterAttempt(tenant.organizationId, new Date(`${start}T08:00:00Z`));
    await meterAttempt(tenant.organizationId, new Date(`${dayAfter(start, 2)}T23:59:59Z`));
    await meterAttempt(tenant.organizationId, new Date(`${dayAfter(start, -1)}T23:59:59Z`));
    const response = await tenant.api.get(`/usage?from=${start}&to=${dayAfter(start, 2)}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.days.map((day: { webhookAttempts: number }) => day.webhookAttempts)).toEqual([3, 0, 1]);
    expect(response.body.data.totals.webhookAttempts).toBe(4);
  });

  it("never shows another organization's calls or runs", async () => {
    const busy = await organizationWithProfile();
    const run = await created(busy.api, "/routing/result", { configurationId: busy.profile._id });
    await deliverRuns([run._id]);
    const day = dayAfter(today(), -2);
    await seedCalls(busy.organizationId, day, 42);
    await meterAttempt(busy.organizationId, new Date(`${day}T12:00:00Z`));

    const other = newTenant();
    await seedCalls(other.organizationId, day, 5);
    const response = await other.api.get(`/usage?from=${day}&to=${dayAfter(today())}`);
    expect(response.status).toBe(200);
    expect(response.body.data.organizationId).toBe(other.organizationId);
    expect(response.body.data.days[0]).toEqual({ day, calls: 5, runs: { count: 0, seconds: 0, travelElements: 0 }, webhookAttempts: 0 });
    expect(response.body.data.totals.runs).toEqual({ count: 0, seconds: 0, travelElements: 0 });
  });

  it("validates the range: 400 for a missing or impossible date, to before from, or more than 366 days", async () => {
    const { api } = newTenant();
    for (const query of [
      "",
      "?from=2026-01-01",
      "?from=2026-02-30&to=2026-03-01",
      "?from=2026-1-01&to=2026-01-02",
      "?from=2026-03-02&to=2026-03-01",
      "?from=2025-01-01&to=2026-01-02",
    ]) {
      const response = await api.get(`/usage${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body, query).toMatchObject({ status: false, failedCode: expect.any(String) });
    }
    const year = await api.get("/usage?from=2024-01-01&to=2024-12-31");
    expect(year.status).toBe(200);
    expect(year.body.data.days).toHaveLength(366);
  });

  it("requires the view/usage permission (403 sys-035 without it)", async () => {
    const organizationId = `org-${crypto.randomUUID()}`;
    const api = apiClient(tokenFor({ organizationId, permissions: ["view/hub"] }));
    const response = await api.get(`/usage?from=${today()}&to=${today()}`);
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ status: false, failedCode: "sys-035" });
  });

  describe("runs count against the plan", () => {
    it("an on-demand run that no longer fits in the month's run seconds answers 429 run-quota-429 with the quota and its reset, and creates nothing", async () => {
      const tenant = await organizationWithProfile();
      // Plan standard: 360,000 s a month; the profile's run may use up to 1 s.
      await seedTenant(tenant.organizationId, "standard");
      await seedMonthSeconds(tenant.organizationId, 359_999.5);
      const refused = await tenant.api.post("/routing/result", { configurationId: tenant.profile._id });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ status: false, failedCode: "run-quota-429" });
      expect(refused.body.message).toContain("360000 optimizer seconds per month");
      expect(refused.body.message).toContain(`resets at ${nextMonthStart()}`);
      expect((await tenant.api.get("/routing/results")).body.data).toEqual([]);

      // The tenant's own plan decides: on enterprise (3,600,000 s) the same usage leaves room.
      await seedTenant(tenant.organizationId, "enterprise");
      expect((await tenant.api.post("/routing/result", { configurationId: tenant.profile._id })).status).toBe(201);
      // On free (3,600 s) it does not.
      await seedTenant(tenant.organizationId, "free");
      await seedMonthSeconds(tenant.organizationId, 3_599.5);
      const overFree = await tenant.api.post("/routing/result", { configurationId: tenant.profile._id });
      expect(refusal(overFree)).toEqual({ status: 429, failedCode: "run-quota-429" });
      expect(overFree.body.message).toContain("plan free allows 3600 optimizer seconds");
    });

    it("an operator plan binds runs too: on tiny (3 run-seconds a month, 1 run queued) the 2nd concurrent run and a 4-second run are refused", async () => {
      const tenant = await organizationWithProfile();
      await seedTenant(tenant.organizationId, "tiny");
      const [first, second] = await Promise.all(
        [0, 1].map(() => tenant.api.post("/routing/result", { configurationId: tenant.profile._id })),
      );
      expect([first?.status, second?.status].sort()).toEqual([201, 429]);
      const refused = first?.status === 429 ? first : second;
      expect(refused?.body).toMatchObject({ status: false, failedCode: "run-429", message: expect.stringContaining("1 routing run") });

      const long = await created(tenant.api, "/routing/configuration", { name: "Long", hubId: tenant.hub._id, timeLimitSeconds: 4 });
      await deliverRuns([(first?.status === 201 ? first : second)?.body.data._id]);
      const overQuota = await tenant.api.post("/routing/result", { configurationId: long._id });
      expect(overQuota.status).toBe(429);
      expect(overQuota.body).toMatchObject({
        status: false,
        failedCode: "run-quota-429",
        message: expect.stringContaining("plan tiny allows 3 optimizer seconds"),
      });
      expect((await tenant.api.get("/routing/results")).body.data).toHaveLength(1);
    });

    it("the cap on runs queued or running is the tenant plan's maxRunsQueued (free: 2)", async () => {
      const tenant = await organizationWithProfile();
      await seedTenant(tenant.organizationId, "free");
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push(await tenant.api.post("/routing/result", { configurationId: tenant.profile._id }));
      expect(statuses.map((response) => response.status)).toEqual([201, 201, 429]);
      expect(statuses[2]?.body).toMatchObject({
        failedCode: "run-429",
        message: expect.stringContaining("2 routing runs queued or running"),
      });
      await deliverRuns(statuses.slice(0, 2).map((response) => response.body.data._id));
    });
  });
});
