import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { documentClient, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { DUE_SHARD_COUNT, dueMinute, dueShardOf, dynamoScheduleStore, listDueSchedules } from "#shared/store/schedule-store";
import { type ApiClient, newTenant } from "#test/support/local-api";
import { schedulingTenant } from "#test/support/scheduling-fixtures";
import { nextIdSecond } from "#test/support/id-order";
import { scheduleBody } from "#test/unit/schedules/fixtures";

/**
 * The due index and the store behind the API, read directly from DynamoDB Local: every write through
 * the API keeps the schedule's due entry right (docs/api/routing-schedules.md, "Stored item and due index"), and the tick's read finds it.
 */
async function createSchedule(api: ApiClient, configurationId: string, overrides: Record<string, unknown> = {}) {
  const response = await api.post("/routing/schedule", scheduleBody({ configurationId, ...overrides }));
  expect(response.status).toBe(201);
  return response.body.data as { _id: string; organizationId: string };
}

async function rawItem(organizationId: string, scheduleId: string) {
  const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.schedule(organizationId, scheduleId) }));
  return output.Item;
}

/** Every due entry of the shard up to `notAfter` (the table is shared with other test files: follow every page). */
async function dueEntries(shard: number, notAfter: Date) {
  const entries = [];
  let cursor: string | undefined;
  do {
    const page = await listDueSchedules(shard, notAfter, 100, cursor);
    entries.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return entries;
}

describe("Store: routing schedule due index", () => {
  it("an active schedule with a next run is in its shard, keyed by the next run minute", async () => {
    const { api, organizationId, profile } = await schedulingTenant();
    const schedule = await createSchedule(api, profile);
    const item = await rawItem(organizationId, schedule._id);
    const nextRunAt = item?.nextRunAt as string;
    expect(nextRunAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00\.000Z$/);
    expect(item).toMatchObject({
      GSI1PK: `DUE#${dueShardOf(schedule._id)}`,
      GSI1SK: keys.dueSortKey(dueMinute(new Date(nextRunAt)), organizationId, schedule._id),
      GSI2PK: keys.schedulesByConfiguration(organizationId, profile),
      GSI2SK: `SCHED#${schedule._id}`,
      entity: "routingSchedule",
    });

    const shard = dueShardOf(schedule._id);
    const due = await dueEntries(shard, new Date(nextRunAt));
    expect(due).toContainEqual({ organizationId, scheduleId: schedule._id, nextRunAt });
    const notYet = await dueEntries(shard, new Date(new Date(nextRunAt).getTime() - 60_000));
    expect(notYet.map((entry) => entry.scheduleId)).not.toContain(schedule._id);
  });

  it("pausing leaves the index, resuming returns, rescheduling moves the entry, deleting removes it", async () => {
    const { api, organizationId, profile } = await schedulingTenant();
    const schedule = await createSchedule(api, profile, { periode: "daily", schedules: [{ time: ["07:00"] }] });
    const path = `/routing/schedule/${schedule._id}`;

    expect((await api.patch(path, { active: false })).status).toBe(200);
    const paused = await rawItem(organizationId, schedule._id);
    expect(paused).not.toHaveProperty("GSI1PK");
    expect(paused).not.toHaveProperty("GSI1SK");
    expect(paused?.nextRunAt).toBeNull();

    expect((await api.patch(path, { active: true })).status).toBe(200);
    const resumed = await rawItem(organizationId, schedule._id);
    expect(resumed?.GSI1SK).toMatch(/T07:00Z#/);

    expect(
      (await api.put(path, scheduleBody({ configurationId: profile, periode: "daily", schedules: [{ time: ["08:30"] }] }))).status,
    ).toBe(200);
    const moved = await rawItem(organizationId, schedule._id);
    expect(moved?.GSI1SK).toMatch(/T08:30Z#/);
    expect(moved?.GSI1PK).toBe(resumed?.GSI1PK);

    expect((await api.patch(path, { endTime: "2026-01-02 00:00" })).status).toBe(200);
    const windowOver = await rawItem(organizationId, schedule._id);
    expect(windowOver).not.toHaveProperty("GSI1PK");

    expect((await api.delete(path)).status).toBe(200);
    expect(await rawItem(organizationId, schedule._id)).toBeUndefined();
  });

  it("spreads schedule ids over every shard, always the same shard for an id", () => {
    const ids = Array.from({ length: 200 }, (_, i) => i.toString(16).padStart(24, "0"));
    const shards = new Set(ids.map(dueShardOf));
    expect([...shards].sort()).toEqual(Array.from({ length: DUE_SHARD_COUNT }, (_, i) => i));
    expect(ids.map(dueShardOf)).toEqual(ids.map(dueShardOf));
  });

  it("rejects a cursor of another shard", async () => {
    const { api, profile } = await schedulingTenant();
    // More due schedules than shards: at least one shard holds two, so its one-item page has a cursor.
    for (let i = 0; i <= DUE_SHARD_COUNT; i++) await createSchedule(api, profile);
    for (let shard = 0; shard < DUE_SHARD_COUNT; shard++) {
      const page = await listDueSchedules(shard, new Date("2100-01-01T00:00:00Z"), 1);
      if (page.nextCursor === null) continue;
      await expect(listDueSchedules((shard + 1) % DUE_SHARD_COUNT, new Date(), 1, page.nextCursor)).rejects.toMatchObject({
        errors: [{ field: "cursor", message: expect.any(String) }],
      });
      return;
    }
    throw new Error("no shard holds two due schedules");
  });
});

describe("Store: listing schedules of several configuration profiles", () => {
  it("pages across the profiles in order, never more than the limit per page", async () => {
    const { api, organizationId, profiles } = await schedulingTenant({}, 4);
    const [a, b, c, x] = profiles as [string, string, string, string];
    for (const [name, configurationId] of [
      ["a1", a],
      ["c1", c],
      ["a2", a],
      ["a3", a],
      ["c2", c],
      ["x1", x],
    ] as const) {
      await nextIdSecond();
      await createSchedule(api, configurationId, { name });
    }
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await dynamoScheduleStore.list(organizationId, { configurationIds: [a, b, c], limit: 2, cursor });
      expect(page.items.length).toBeLessThanOrEqual(2);
      names.push(...page.items.map((schedule) => schedule.name));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor && pages < 10);
    expect(names).toEqual(["a1", "a2", "a3", "c1", "c2"]);
  });

  it("rejects a tampered cursor", async () => {
    const { organizationId } = newTenant();
    const forged = Buffer.from(JSON.stringify({ p: 5, c: "" })).toString("base64url");
    await expect(
      dynamoScheduleStore.list(organizationId, { configurationIds: ["conf-a"], limit: 2, cursor: forged }),
    ).rejects.toMatchObject({
      errors: [{ field: "cursor", message: expect.any(String) }],
    });
    await expect(dynamoScheduleStore.list(organizationId, { configurationIds: ["conf-a"], limit: 2, cursor: "%%%" })).rejects.toMatchObject(
      {
        errors: [{ field: "cursor", message: expect.any(String) }],
      },
    );
  });
});
