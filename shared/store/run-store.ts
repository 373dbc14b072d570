import { BatchGetCommand, DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { RoutingRunMessage } from "#shared/domain/runs/messages";
import { type ScheduleRecord, scheduleRecordSchema } from "#shared/domain/schedules/schema";
import { type Vehicle, vehicleSchema } from "#shared/domain/vehicles/schema";
import { nextRunAfter } from "#shared/domain/schedules/timetable";
import { conditionally, documentClient, isConditionalCheckFailed, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { queryUpTo } from "#shared/store/pagination";
import { dueMinute, dueShardOf } from "#shared/store/schedule-store";

/**
 * Run slots of routing schedules: the claim item (`ORG#o#SCHED#id` / `RUN#<slot>`) whose
 * conditional put makes each slot run at most once, and the advance of a schedule's next run.
 */
const CLAIM_RETENTION_SECONDS = 30 * 24 * 3600;

export async function claimRunSlot(message: RoutingRunMessage, now: Date): Promise<boolean> {
  return conditionally(
    documentClient().send(
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
    ),
  );
}

/** Deletes the claim of a message that was not sent — only while it still is ENQUEUED (never a sent or running claim). */
export async function releaseRunSlot(message: RoutingRunMessage): Promise<void> {
  await conditionally(
    documentClient().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: keys.scheduleRunClaim(message.organizationId, message.scheduleId, message.slot),
        ConditionExpression: "#status = :enqueued",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":enqueued": "ENQUEUED" },
      }),
    ),
  );
}

/**
 * The tick's schedules of one group (at most 100 keys, one BatchGetItem; unprocessed keys asked
 * again), in the order of `entries`, undefined for a schedule that is gone.
 */
export async function readSchedulesForTick(
  entries: ReadonlyArray<{ organizationId: string; scheduleId: string }>,
): Promise<Array<ScheduleRecord | undefined>> {
  if (entries.length === 0) return [];
  if (entries.length > 100) throw new Error("BatchGetItem reads at most 100 keys");
  const found = new Map<string, ScheduleRecord>();
  let requested: Array<Record<string, unknown>> | undefined = entries.map(
    (entry) => keys.schedule(entry.organizationId, entry.scheduleId) as unknown as Record<string, unknown>,
  );
  for (let round = 0; requested && requested.length > 0; round++) {
    if (round === 10) throw new Error("DynamoDB left schedules unread after 10 rounds");
    const output = await documentClient().send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: requested } } }));
    for (const item of output.Responses?.[tableName()] ?? []) {
      const schedule = scheduleRecordSchema.parse(item);
      found.set(`${schedule.organizationId}#${schedule._id}`, schedule);
    }
    requested = output.UnprocessedKeys?.[tableName()]?.Keys as Array<Record<string, unknown>> | undefined;
  }
  return entries.map((entry) => found.get(`${entry.organizationId}#${entry.scheduleId}`));
}

/**
 * Moves the schedule's next run past `handledRunAt` — only if it still is `handledRunAt` (a user's
 * edit in between recomputed it already and wins). Keeps the sparse due index in the same write.
 * `seen`: the schedule as the tick read it — then this is one conditional update (also requiring the
 * same `updatedTime`, so the next run is computed from the current timetable); when that condition
 * fails, or without `seen`, the schedule is read and the update tried once more on what was read.
 */
export async function advanceSchedule(
  organizationId: string,
  scheduleId: string,
  handledRunAt: string,
  timeZone: string,
  seen?: ScheduleRecord,
): Promise<void> {
  const key = keys.schedule(organizationId, scheduleId);
  if (seen && seen.nextRunAt === handledRunAt && (await advanceFrom(seen, handledRunAt, timeZone, true))) return;
  const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  if (!output.Item) return;
  const schedule = scheduleRecordSchema.parse(output.Item);
  if (schedule.nextRunAt !== handledRunAt) return;
  // A failed condition: a user edit recomputed the next run meanwhile, and it wins.
  await advanceFrom(schedule, handledRunAt, timeZone, false);
}

/** One conditional update: next run after `handledRunAt` by `schedule`'s timetable; false when the condition failed. */
function advanceFrom(schedule: ScheduleRecord, handledRunAt: string, timeZone: string, sameVersion: boolean): Promise<boolean> {
  const { organizationId, _id: scheduleId } = schedule;
  const next = nextRunAfter(schedule, new Date(handledRunAt), timeZone)?.toISOString() ?? null;
  const unchanged = sameVersion ? { ":updated": schedule.updatedTime } : {};
  return conditionally(
    documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.schedule(organizationId, scheduleId),
        ...(next !== null && schedule.active
          ? {
              UpdateExpression: "SET nextRunAt = :next, GSI1PK = :shard, GSI1SK = :due",
              ExpressionAttributeValues: {
                ":next": next,
                ":shard": keys.dueShard(dueShardOf(scheduleId)),
                ":due": keys.dueSortKey(dueMinute(new Date(next)), organizationId, scheduleId),
                ":handled": handledRunAt,
                ...unchanged,
              },
            }
          : {
              UpdateExpression: "SET nextRunAt = :next REMOVE GSI1PK, GSI1SK",
              ExpressionAttributeValues: { ":next": null, ":handled": handledRunAt, ...unchanged },
            }),
        ConditionExpression: sameVersion ? "nextRunAt = :handled AND updatedTime = :updated" : "nextRunAt = :handled",
      }),
    ),
  );
}

/** `logExecuted` is written by the scheduler only (tick and run worker), never by clients. */
export async function recordLogExecuted(organizationId: string, scheduleId: string, logExecuted: Record<string, unknown>): Promise<void> {
  // A failed condition: the schedule was deleted meanwhile, nothing to record on.
  await conditionally(
    documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.schedule(organizationId, scheduleId),
        UpdateExpression: "SET logExecuted = :log",
        ConditionExpression: "attribute_exists(PK)",
        ExpressionAttributeValues: { ":log": logExecuted },
      }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Run worker: the claim item's status moves ENQUEUED/SENT/FAILED → RUNNING → DONE/SKIPPED/FAILED with
// conditional updates, so a redelivered or duplicated message runs a slot at most once at a time
// and never again once it is DONE or SKIPPED.

export type RunClaimStatus = "ENQUEUED" | "SENT" | "RUNNING" | "DONE" | "SKIPPED" | "FAILED";

export interface RunClaim {
  status: RunClaimStatus;
  /** The routing result of this slot, fixed at the first start so a retry rewrites the same result. */
  resultId: string | null;
  attempts: number;
}

/** The slot's claim (read by the tick and the worker), or undefined when there is none. */
export async function readRunClaim(
  organizationId: string,
  scheduleId: string,
  slot: string,
): Promise<(RunClaim & { claimedAt: string }) | undefined> {
  const output = await documentClient().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.scheduleRunClaim(organizationId, scheduleId, slot),
      ConsistentRead: true,
      ProjectionExpression: "#status, resultId, attempts, claimedAt",
      ExpressionAttributeNames: { "#status": "status" },
    }),
  );
  if (!output.Item) return undefined;
  return {
    status: output.Item.status as RunClaimStatus,
    resultId: (output.Item.resultId as string | undefined) ?? null,
    attempts: Number(output.Item.attempts ?? 0),
    claimedAt: String(output.Item.claimedAt),
  };
}

/**
 * ENQUEUED/SENT/FAILED → RUNNING, or a RUNNING claim whose lease ran out (its worker died) → RUNNING.
 * Answers the claim as started (its result id is the first start's), or undefined when another
 * worker holds it or it is finished.
 */
export async function startRunClaim(
  organizationId: string,
  scheduleId: string,
  slot: string,
  proposedResultId: string,
  now: Date,
  leaseMs: number,
): Promise<RunClaim | undefined> {
  try {
    const output = await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.scheduleRunClaim(organizationId, scheduleId, slot),
        ConditionExpression:
          "attribute_exists(PK) AND (#status IN (:enqueued, :sent, :failed) OR (#status = :running AND leaseUntil < :now))",
        UpdateExpression:
          "SET #status = :running, leaseUntil = :lease, resultId = if_not_exists(resultId, :result), startedAt = :nowIso ADD attempts :one",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: {
          ":enqueued": "ENQUEUED",
          ":sent": "SENT",
          ":failed": "FAILED",
          ":running": "RUNNING",
          ":now": now.getTime(),
          ":lease": now.getTime() + leaseMs,
          ":result": proposedResultId,
          ":nowIso": now.toISOString(),
          ":one": 1,
        },
        ReturnValues: "ALL_NEW",
      }),
    );
    const item = output.Attributes ?? {};
    return { status: "RUNNING", resultId: String(item.resultId), attempts: Number(item.attempts ?? 1) };
  } catch (error) {
    if (isConditionalCheckFailed(error)) return undefined;
    throw error;
  }
}

/** RUNNING → DONE/SKIPPED/FAILED (or straight from ENQUEUED/SENT to SKIPPED when the schedule changed). */
export async function finishRunClaim(
  organizationId: string,
  scheduleId: string,
  slot: string,
  status: Exclude<RunClaimStatus, "ENQUEUED" | "SENT" | "RUNNING">,
  message: string | null,
  now: Date,
): Promise<void> {
  // A failed condition: another delivery finished it already, nothing to change.
  await conditionally(
    documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.scheduleRunClaim(organizationId, scheduleId, slot),
        ConditionExpression: "attribute_exists(PK) AND #status IN (:enqueued, :sent, :running, :failed)",
        UpdateExpression: "SET #status = :status, outcome = :message, finishedAt = :now REMOVE leaseUntil",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: {
          ":enqueued": "ENQUEUED",
          ":sent": "SENT",
          ":running": "RUNNING",
          ":failed": "FAILED",
          ":status": status,
          ":message": message,
          ":now": now.toISOString(),
        },
      }),
    ),
  );
}

/** Most vehicles a run plans with when the profile lists none (every vehicle of the hub). */
export const maxHubVehiclesPerRun = 500;

/**
 * The vehicles a run plans with, read at run time: the profile's `vehicleIds` that still exist and
 * still belong to the hub, or (empty list) every vehicle of the hub, oldest first, at most 500.
 */
export async function vehiclesForRun(organizationId: string, hubId: string, vehicleIds: string[]): Promise<Vehicle[]> {
  if (vehicleIds.length > 0) {
    const found: Vehicle[] = [];
    for (let i = 0; i < vehicleIds.length; i += 100) {
      let requested: Array<Record<string, unknown>> | undefined = vehicleIds
        .slice(i, i + 100)
        .map((id) => keys.vehicle(organizationId, id) as unknown as Record<string, unknown>);
      for (let round = 0; requested && requested.length > 0 && round < 10; round++) {
        const output = await documentClient().send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: requested } } }));
        found.push(...(output.Responses?.[tableName()] ?? []).map((item) => vehicleSchema.parse(item)));
        requested = output.UnprocessedKeys?.[tableName()]?.Keys as Array<Record<string, unknown>> | undefined;
      }
    }
    const order = new Map(vehicleIds.map((id, index) => [id, index]));
    return found.filter((vehicle) => vehicle.hubId === hubId).sort((a, b) => (order.get(a._id) ?? 0) - (order.get(b._id) ?? 0));
  }
  const items = await queryUpTo({ index: "GSI1", partition: keys.vehiclesByHub(organizationId, hubId), max: maxHubVehiclesPerRun });
  return items.map((item) => vehicleSchema.parse(item));
}

/** The schedule as stored, for the worker (undefined when deleted). */
export async function findScheduleForRun(organizationId: string, scheduleId: string): Promise<ScheduleRecord | undefined> {
  const output = await documentClient().send(
    new GetCommand({ TableName: tableName(), Key: keys.schedule(organizationId, scheduleId), ConsistentRead: true }),
  );
  return output.Item ? scheduleRecordSchema.parse(output.Item) : undefined;
}
