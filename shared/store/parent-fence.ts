import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { DELETE_FENCE_ATTRIBUTE, DELETE_FENCE_TTL_MS } from "#shared/store/delete-fence";
import { documentClient, isConditionalCheckFailed, tableName } from "#shared/store/dynamo";
import type { ItemKey } from "#shared/store/keys";

/**
 * The rare writer's fence on a parent item (a data type changed or deleted, a hub deleted;
 * docs/architecture.md, "Writes without shared items"): set on the parent at the version the
 * writer read, so children confirming the parent after it see it, and lifted when the write behind
 * it did not happen. The version is not bumped, so the parent's ETag stays.
 */

/** Sets the fence when the parent is still at `expectedVersion` and carries no live fence; the fence's time, or undefined when it moved on. */
export async function setParentFence(key: ItemKey, expectedVersion: number): Promise<number | undefined> {
  const fencedAt = Date.now();
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: "SET #fence = :fencedAt",
        ConditionExpression: "version = :expected AND (attribute_not_exists(#fence) OR #fence < :cutoff)",
        ExpressionAttributeNames: { "#fence": DELETE_FENCE_ATTRIBUTE },
        ExpressionAttributeValues: { ":expected": expectedVersion, ":fencedAt": fencedAt, ":cutoff": fencedAt - DELETE_FENCE_TTL_MS },
      }),
    );
    return fencedAt;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return undefined;
    throw error;
  }
}

/** Lifts our fence (the write behind it did not happen); a fence already gone or another's is left alone. */
export async function liftParentFence(key: ItemKey, fencedAt: number): Promise<void> {
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: "REMOVE #fence",
        ConditionExpression: "#fence = :fencedAt",
        ExpressionAttributeNames: { "#fence": DELETE_FENCE_ATTRIBUTE },
        ExpressionAttributeValues: { ":fencedAt": fencedAt },
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
  }
}
