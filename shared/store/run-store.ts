import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { RoutingRunMessage } from "#shared/domain/runs/messages";
import { scheduleRecordSchema } from "#shared/domain/schedules/schema";
import { nextRunAfter } from "#shared/domain/schedules/timetable";
import { documentClient, isConditionalCheckFailed, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { dueMinute, dueShardOf } from "#shared/store/schedule-store";

/**
 * Run slots of routing schedules: the claim item (`ORG#o#SCHED#id` / `RUN#<slot>`) whose
 * conditional put makes each slot run at most once, and the advance of a schedule's next run.
 */
const CLAIM_RETENTION_SECONDS = 30 * 24 * 3600;

export async function claimRunSlot(message: RoutingRunMessage, now: Date): Promise<boolean> {
  try {
    await documentClient().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...keys.scheduleRunClaim(message.organizationId, message.scheduleId, message.slot),
          entity: "runClaim",
          status: "ENQUEUED",
          message,
          claimedAt: now.toISOString(),
          expiresAt: Math.floor(now.getTime() / 1000) + CLAIM_RETENTION_SECONDS,
        },
        ConditionExpression: "attribute_not_exists(PK)",
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}

export async function releaseRunSlot(message: RoutingRunMessage): Promise<void> {
  await documentClient().send(
    new DeleteCommand({ TableName: tableName(), Key: keys.scheduleRunClaim(message.organizationId, message.scheduleId, message.slot) }),
  );
}

export async function readScheduleForTick(organizationId: string, scheduleId: string) {
  const output = await documentClient().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.schedule(organizationId, scheduleId),
      ProjectionExpression: "updatedTime, nextRunAt",
    }),
  );
  return output.Item ? { updatedTime: String(output.Item.updatedTime), nextRunAt: (output.Item.nextRunAt as string | null) ?? null } : undefined;
}

/**
 * Moves the schedule's next run past `handledRunAt` — only if it still is `handledRunAt` (a user's
 * edit in between recomputed it already and wins). Keeps the sparse due index in the same write.
 */
export async function advanceSchedule(organizationId: string, scheduleId: string, handledRunAt: string, timeZone: string): Promise<void> {
  const key = keys.schedule(organizationId, scheduleId);
  const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: key }));
  if (!output.Item) return;
  const schedule = scheduleRecordSchema.parse(output.Item);
  if (schedule.nextRunAt !== handledRunAt) return;
  const next = nextRunAfter(schedule, new Date(handledRunAt), timeZone)?.toISOString() ?? null;
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        ...(next !== null && schedule.active
          ? {
              UpdateExpression: "SET nextRunAt = :next, GSI1PK = :shard, GSI1SK = :due",
              ExpressionAttributeValues: {
                ":next": next,
                ":shard": keys.dueShard(dueShardOf(scheduleId)),
                ":due": keys.dueSortKey(dueMinute(new Date(next)), organizationId, scheduleId),
                ":handled": handledRunAt,
              },
            }
          : {
              UpdateExpression: "SET nextRunAt = :next REMOVE GSI1PK, GSI1SK",
              ExpressionAttributeValues: { ":next": null, ":handled": handledRunAt },
            }),
        ConditionExpression: "nextRunAt = :handled",
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
  }
}

/** `logExecuted` is written by the scheduler only (tick and run worker), never by clients. */
export async function recordLogExecuted(organizationId: string, scheduleId: string, logExecuted: Record<string, unknown>): Promise<void> {
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.schedule(organizationId, scheduleId),
        UpdateExpression: "SET logExecuted = :log",
        ConditionExpression: "attribute_exists(PK)",
        ExpressionAttributeValues: { ":log": logExecuted },
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error; // the schedule was deleted meanwhile: nothing to record on
  }
}
