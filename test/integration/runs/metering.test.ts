import type { SQSClient } from "@aws-sdk/client-sqs";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { beforeEach, describe, expect, it } from "vitest";
import { handler } from "#functions/jobs/routing-run";
import { utcMonth } from "#shared/domain/usage/schema";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { dynamoRoutingResultStore } from "#shared/store/routing-result-store";
import { runSecondsUsed, runUsageItemsBetween } from "#shared/store/usage-store";
import { useIsolatedTableAndQueue } from "#test/support/isolated-resources";
import { acknowledge, callerOf, createDueSchedule, receive, seedHub, sqsEvent, storedSchedule, tickAt } from "./run-fixtures.ts";

/** Scheduled runs and the plan: metering once per run, and SKIPPED past the monthly run-seconds quota (DynamoDB Local + local SQS). */
describe("Job: routing run worker — metering and the run-seconds quota", () => {
  let sqs: SQSClient;
  let queueUrl: string;

  // A table and queue per test: a test that times out leaves its messages and due schedules behind,
  // and the next test must not receive or tick them.
  beforeEach(async () => {
    ({ sqs, queueUrl } = await useIsolatedTableAndQueue());
  });

  it("a scheduled run is metered once although its message is delivered three times", async () => {
    const owner = callerOf();
    const { profile, hub } = await seedHub(owner, { vehicles: 2, visits: 4 });
    const { schedule, afterDue } = await createDueSchedule(owner, profile._id);
    await tickAt(afterDue);
    const messages = await receive(sqs, queueUrl);
    expect(messages).toHaveLength(1);
    for (let delivery = 0; delivery < 3; delivery++) expect((await handler(sqsEvent(messages))).batchItemFailures).toEqual([]);
    await acknowledge(sqs, queueUrl, messages, { batchItemFailures: [] });

    const [result] = (await dynamoRoutingResultStore.list(owner.organizationId, { allowedHubIds: [], limit: 10 })).items;
    const day = new Date().toISOString().slice(0, 10);
    const runs = await runUsageItemsBetween(owner.organizationId, "2020-01-01", "2099-12-31");
    expect(runs).toEqual([
      expect.objectContaining({
        runId: result?._id,
        kind: "scheduled",
        scheduleId: schedule._id,
        hubId: hub._id,
        configurationId: profile._id,
        outcome: "done",
        visits: 4,
        vehicles: 2,
      }),
    ]);
    expect([day, new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)]).toContain(runs[0]?.day);
    expect(await runSecondsUsed(owner.organizationId, utcMonth(new Date(`${runs[0]?.day}T00:00:00Z`)))).toBeCloseTo(
      runs[0]?.optimizerSeconds ?? -1,
      3,
    );
  });

  it("a scheduled run that no longer fits in the month's run seconds is SKIPPED with the quota and its reset in logExecuted; nothing runs or is metered", async () => {
    const owner = callerOf();
    const { profile } = await seedHub(owner);
    const now = new Date();
    // Plan standard (the tenant record the operator's CLI writes) allows 360,000 s a month; the profile's run may use up to 1 s.
    await documentClient().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...keys.tenant(owner.organizationId),
          organizationId: owner.organizationId,
          entity: "tenant",
          plan: "standard",
          status: "active",
          createdTime: "2026-01-01 00:00:00",
          updatedTime: "2026-01-01 00:00:00",
        },
      }),
    );
    await documentClient().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.runSecondsTotal(owner.organizationId, utcMonth(now)), seconds: 359_999.5 },
      }),
    );
    const { schedule, afterDue } = await createDueSchedule(owner, profile._id);
    await tickAt(afterDue);
    const messages = await receive(sqs, queueUrl);
    const response = await handler(sqsEvent(messages));
    expect(response.batchItemFailures).toEqual([]);
    await acknowledge(sqs, queueUrl, messages, response);

    const log = (await storedSchedule(owner.organizationId, schedule._id))?.logExecuted;
    expect(log).toMatchObject({ status: "SKIPPED", routingResultId: null });
    expect(log?.message).toContain("Monthly run-seconds quota reached: plan standard allows 360000 optimizer seconds per month");
    expect(log?.message).toContain(`resets at ${new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString()}`);
    expect((await dynamoRoutingResultStore.list(owner.organizationId, { allowedHubIds: [], limit: 10 })).items).toEqual([]);
    expect(await runUsageItemsBetween(owner.organizationId, "2020-01-01", "2099-12-31")).toEqual([]);
  });
});
