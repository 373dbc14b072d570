import { QueryCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { ValidationError } from "#shared/domain/errors";
import { type ScheduleRecord, scheduleRecordSchema } from "#shared/domain/schedules/schema";
import type { ScheduleListFilter, SchedulePage, ScheduleStore } from "#shared/domain/schedules/service";
import { documentClient, tableName, type TransactItem, transactionCancellationCodes } from "#shared/store/dynamo";
import { deleteVersioned, putNew, putVersioned, versionConflict } from "#shared/store/transactions";
import { contentionExhausted } from "#shared/store/contention-retry";
import { concurrentUpdateError, getVersioned, replaceItem } from "#shared/store/items";
import { keys } from "#shared/store/keys";
import { decodeCursor, encodeCursor, queryPage, queryPageAcross } from "#shared/store/pagination";

/**
 * Routing schedules over the single table (see docs/api/routing-schedules.md for the item shape).
 *
 * The due index lives on GSI1 of the schedule item itself: `GSI1PK = DUE#<shard>`,
 * `GSI1SK = <next run minute, ISO UTC>#<org>#<id>`, present only while the schedule is active and has
 * a next run (a sparse index). Because it is part of the same item, every put or delete of the
 * schedule moves, adds or drops its due entry in that one write: the index can never disagree with
 * the schedule it points at.
 */

/** Shards of the due index: the tick reads each shard's `<= now` range; spreads one busy minute over partitions. */
export const DUE_SHARD_COUNT = 4;

/** Stable shard of a schedule (FNV-1a of its id): a schedule always stays in the same shard. */
export function dueShardOf(scheduleId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < scheduleId.length; i++) {
    hash ^= scheduleId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % DUE_SHARD_COUNT;
}

/** `2026-12-01T07:00Z`: the minute of an instant, UTC, sortable as text. */
export function dueMinute(instant: Date): string {
  return `${instant.toISOString().slice(0, 16)}Z`;
}

/** The stored item of a schedule (its due-index and by-configuration keys included). */
export function scheduleItem(schedule: ScheduleRecord): Record<string, unknown> {
  const item: Record<string, unknown> = {
    ...schedule,
    entity: "routingSchedule",
    GSI2PK: keys.schedulesByConfiguration(schedule.organizationId, schedule.configurationId),
    GSI2SK: `${keys.schedulePrefix}${schedule._id}`,
  };
  if (schedule.active && schedule.nextRunAt !== null) {
    item.GSI1PK = keys.dueShard(dueShardOf(schedule._id));
    item.GSI1SK = keys.dueSortKey(dueMinute(new Date(schedule.nextRunAt)), schedule.organizationId, schedule._id);
  }
  return item;
}

const parseSchedule = (item: Record<string, unknown>) => scheduleRecordSchema.parse(item);

/** Thrown by writeCountingProfiles when the schedule item's own condition failed and the caller maps nothing. */
const scheduleGone = new Error("schedule gone or changed");

function profileCountUpdate(organizationId: string, configurationId: string, delta: 1 | -1): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: keys.configurationScheduleRefs(organizationId, configurationId),
      // never below zero: schedules written before the count existed were never counted
      ...(delta < 0
        ? { ConditionExpression: "scheduleRefs > :zero", ExpressionAttributeValues: { ":delta": delta, ":zero": 0 } }
        : { ExpressionAttributeValues: { ":delta": delta } }),
      UpdateExpression: "ADD scheduleRefs :delta",
    },
  };
}

const profileMustExist = (organizationId: string, configurationId: string): TransactItem => ({
  ConditionCheck: {
    TableName: tableName(),
    Key: keys.configuration(organizationId, configurationId),
    ConditionExpression: "attribute_exists(PK)",
  },
});

/**
 * Writes the schedule item and moves its count between configuration profiles in one transaction,
 * the way hubs count their vehicles (shared/store/hub-store.ts): counting on a profile requires the
 * profile to exist, and deleting a profile requires its count to be zero (configuration-store.ts),
 * so a schedule can never be left naming a deleted profile. A profile missing → 400 naming
 * `configurationId`; the schedule item's own condition failing → `onScheduleFailed()` (thrown when
 * it returns an error, else `scheduleGone`); a concurrent transaction → 409. A count that is
 * already zero (a schedule older than the count) is skipped rather than made negative.
 */
async function writeCountingProfiles(
  organizationId: string,
  scheduleItems: TransactItem[],
  move: { from?: string; to?: string },
  onScheduleFailed: () => Error | Promise<Error> | undefined,
): Promise<void> {
  const adds = move.to !== undefined ? [profileMustExist(organizationId, move.to), profileCountUpdate(organizationId, move.to, 1)] : [];
  let removes = move.from !== undefined ? [profileCountUpdate(organizationId, move.from, -1)] : [];
  for (;;) {
    try {
      await documentClient().send(new TransactWriteCommand({ TransactItems: [...scheduleItems, ...adds, ...removes] }));
      return;
    } catch (error) {
      const codes = transactionCancellationCodes(error);
      if (!codes) throw error;
      const failed = (index: number) => codes[index] === "ConditionalCheckFailed";
      if (adds.length > 0 && failed(scheduleItems.length)) {
        throw ValidationError.single("configurationId", "configurationId must name a configuration profile of your organization");
      }
      if (scheduleItems.some((_, index) => failed(index))) throw (await onScheduleFailed()) ?? scheduleGone;
      if (codes.includes("TransactionConflict")) throw contentionExhausted("conflict");
      if (removes.length > 0 && failed(scheduleItems.length + adds.length)) {
        removes = [];
        continue;
      }
      throw error;
    }
  }
}

/** One GSI2 partition per configuration, read in turn (a hub has few profiles), one item ahead like every list. */
function listByConfigurations(organizationId: string, configurationIds: string[], limit: number, cursor: string | undefined) {
  const reads = configurationIds.map((configurationId) => ({
    index: "GSI2" as const,
    partition: keys.schedulesByConfiguration(organizationId, configurationId),
  }));
  return queryPageAcross<Record<string, unknown>>(reads, limit, cursor).then((page) => ({
    items: page.items.map(parseSchedule),
    nextCursor: page.nextCursor,
  }));
}

export const dynamoScheduleStore: ScheduleStore = {
  async insert(schedule) {
    const key = keys.schedule(schedule.organizationId, schedule._id);
    // Ids are fresh ObjectIds; a collision means something is badly wrong, not a client mistake.
    await writeCountingProfiles(schedule.organizationId, [putNew(key, scheduleItem(schedule))], { to: schedule.configurationId }, () =>
      concurrentUpdateError(),
    );
  },

  async find(organizationId, scheduleId) {
    const found = await getVersioned<Record<string, unknown>>(keys.schedule(organizationId, scheduleId));
    return found && { schedule: parseSchedule(found.value), version: found.version };
  },

  async replace(schedule, previous) {
    const key = keys.schedule(schedule.organizationId, schedule._id);
    if (schedule.configurationId === previous.configurationId) {
      await replaceItem(key, scheduleItem(schedule), previous.version);
      return;
    }
    await writeCountingProfiles(
      schedule.organizationId,
      [putVersioned(key, scheduleItem(schedule), previous.version)],
      { from: previous.configurationId, to: schedule.configurationId },
      () => versionConflict(key),
    );
  },

  async remove(organizationId, scheduleId, previous) {
    try {
      await writeCountingProfiles(
        organizationId,
        [deleteVersioned(keys.schedule(organizationId, scheduleId), previous.version)],
        { from: previous.configurationId },
        () => undefined,
      );
      return true;
    } catch (error) {
      if (error === scheduleGone) return false;
      throw error;
    }
  },

  async list(organizationId, filter: ScheduleListFilter): Promise<SchedulePage<ScheduleRecord>> {
    if (filter.configurationIds !== undefined) {
      return listByConfigurations(organizationId, filter.configurationIds, filter.limit, filter.cursor);
    }
    const page = await queryPage<Record<string, unknown>>({
      partition: keys.organizationPartition(organizationId),
      sortKeyPrefix: keys.schedulePrefix,
      limit: filter.limit,
      cursor: filter.cursor,
    });
    return { items: page.items.map(parseSchedule), nextCursor: page.nextCursor };
  },
};

/** One entry of the due index, as the scheduler tick reads it. */
export interface DueSchedule {
  organizationId: string;
  scheduleId: string;
  /** The run instant the entry is due for (ISO 8601 UTC). */
  nextRunAt: string;
}

/**
 * One bounded page of the due index: schedules of `shard` whose next run minute is at or before the
 * minute of `notAfter`, oldest first. The read the once-a-minute tick makes per shard
 * (`GSI1SK < <minute after notAfter>`, so its cost follows the number of due schedules only).
 */
export async function listDueSchedules(shard: number, notAfter: Date, limit: number, cursor?: string): Promise<SchedulePage<DueSchedule>> {
  const partition = keys.dueShard(shard);
  const followingMinute = dueMinute(new Date(Math.floor(notAfter.getTime() / 60_000) * 60_000 + 60_000));
  const output = await documentClient().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: "GSI1",
      KeyConditionExpression: "GSI1PK = :shard AND GSI1SK < :followingMinute",
      ExpressionAttributeValues: { ":shard": partition, ":followingMinute": followingMinute },
      ProjectionExpression: "organizationId, #id, nextRunAt",
      ExpressionAttributeNames: { "#id": "_id" },
      Limit: limit,
      ExclusiveStartKey: cursor ? decodeCursor(cursor, "GSI1PK", partition) : undefined,
    }),
  );
  return {
    items: (output.Items ?? []).map((item) => ({
      organizationId: String(item.organizationId),
      scheduleId: String(item._id),
      nextRunAt: String(item.nextRunAt),
    })),
    nextCursor: encodeCursor(output.LastEvaluatedKey),
  };
}
