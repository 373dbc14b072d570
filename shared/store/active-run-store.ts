import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { type ActiveRunLeases, endedLeases, leaseEnd, mayTakeSlot } from "#shared/domain/runs/active-runs";
import { conditionally, documentClient, isConditionalCheckFailed, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";

/**
 * The per-organization cap on active runs (shared/domain/runs/active-runs.ts): one item
 * `ORG#o` / `ACTIVERUNS` whose `runs` map holds a lease end (epoch ms) per queued or running run.
 */

/** DynamoDB rejects a path into a map that does not exist yet with a ValidationException. */
const isMissingPath = (error: unknown) => error instanceof Error && error.name === "ValidationException" && /document path/i.test(error.message);

/**
 * Takes (or renews) the run's slot when the organization holds fewer than `max` live leases. One
 * conditional write decides, so concurrent takers never exceed the cap. When it is full, ended
 * leases (crashed workers' runs) are removed and the write is tried again.
 */
export async function takeActiveRunSlot(organizationId: string, runKey: string, max: number, now: Date, leaseSeconds: number): Promise<boolean> {
  const key = keys.activeRuns(organizationId);
  // Each retry follows a change by another taker (map created, ended leases removed): a handful suffices.
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: key,
          UpdateExpression: "SET runs.#run = :until",
          ConditionExpression: "attribute_exists(runs) AND (attribute_exists(runs.#run) OR size(runs) < :max)",
          ExpressionAttributeNames: { "#run": runKey },
          ExpressionAttributeValues: { ":until": leaseEnd(now, leaseSeconds), ":max": max },
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionalCheckFailed(error) && !isMissingPath(error)) throw error;
    }
    const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
    const runs = output.Item?.runs as ActiveRunLeases | undefined;
    if (!runs) {
      // First run of the organization: create the empty map (if a concurrent taker has not), then take.
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: key,
          UpdateExpression: "SET runs = if_not_exists(runs, :empty), entity = :entity",
          ExpressionAttributeValues: { ":empty": {}, ":entity": "activeRuns" },
        }),
      );
      continue;
    }
    // The write failed before another taker had created the map: there is room, try again.
    if (Object.keys(runs).length < max || runKey in runs) continue;
    const ended = endedLeases(runs, now);
    if (!mayTakeSlot(runs, runKey, max, now) || ended.length === 0) return false; // the cap is full of live runs
    // Each removal only if the lease is still the ended one (a renewal in between wins).
    const names = Object.fromEntries(ended.map((run, i) => [`#e${i}`, run]));
    const values = Object.fromEntries(ended.map((run, i) => [`:e${i}`, runs[run]]));
    await conditionally(
      documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: key,
          UpdateExpression: `REMOVE ${ended.map((_, i) => `runs.#e${i}`).join(", ")}`,
          ConditionExpression: ended.map((_, i) => `runs.#e${i} = :e${i}`).join(" AND "),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      ),
    );
  }
  return false;
}

/** Frees the run's slot; releasing a slot that is not held (twice, or never taken) changes nothing. */
export async function releaseActiveRunSlot(organizationId: string, runKey: string): Promise<void> {
  await conditionally(
    documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.activeRuns(organizationId),
        UpdateExpression: "REMOVE runs.#run",
        ConditionExpression: "attribute_exists(runs)",
        ExpressionAttributeNames: { "#run": runKey },
      }),
    ),
  );
}

/** The runs holding a slot now (tests and operators). */
export async function activeRunLeases(organizationId: string): Promise<ActiveRunLeases> {
  const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: keys.activeRuns(organizationId), ConsistentRead: true }));
  return (output.Item?.runs as ActiveRunLeases | undefined) ?? {};
}
