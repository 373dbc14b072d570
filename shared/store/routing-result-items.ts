import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { type ResultListFilter, type RoutingResultStore, withDispatch } from "#shared/domain/routing-results/service";
import { resultRecordSchema, type RoutingResultRecord } from "#shared/domain/routing-results/schema";
import { documentClient, isConditionalCheckFailed, tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";
import { concurrentUpdateError } from "#shared/store/items";
import { type PartitionRead, queryPage, queryPageAcross } from "#shared/store/pagination";

// The routing result items in DynamoDB, apart from the bodies in S3 (routing-result-store.ts):
// functions that only list or create results do not carry the S3 client.
function resultItem(result: RoutingResultRecord): Record<string, unknown> {
  return {
    ...keys.routingResult(result.organizationId, result._id),
    ...result,
    entity: "routingResult",
    GSI1PK: keys.routingResultsByHub(result.organizationId, result.hubId),
    GSI1SK: `${keys.routingResultPrefix}${result._id}`,
  };
}

/** Dispatches of one result racing each other: each loser reads and merges again. */
const maxDispatchAttempts = 8;

function createdFromFilter(filter: ResultListFilter): PartitionRead["filter"] {
  return filter.createdFrom !== undefined
    ? { expression: "createdFrom = :createdFrom", values: { ":createdFrom": filter.createdFrom } }
    : undefined;
}

/** The result items alone (no S3): what listing and creating results need. */
export type RoutingResultItems = Omit<RoutingResultStore, "readBody" | "complete">;

export const dynamoRoutingResultItems: RoutingResultItems = {
  async insert(result) {
    await documentClient().send(
      new PutCommand({ TableName: tableName(), Item: resultItem(result), ConditionExpression: "attribute_not_exists(PK)" }),
    );
  },

  /** Creates the result, or resets a result left by an earlier attempt of the same run to ongoing. */
  async upsertOngoing(result) {
    await documentClient().send(new PutCommand({ TableName: tableName(), Item: resultItem(result) }));
  },

  async find(organizationId, resultId) {
    const output = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.routingResult(organizationId, resultId), ConsistentRead: true }),
    );
    return output.Item ? resultRecordSchema.parse(output.Item) : undefined;
  },

  async fail(organizationId, resultId, message, time) {
    return setFinal(organizationId, resultId, "failed", { message, updatedTime: time, finishedTime: time });
  },

  /**
   * Read, merge, write under the dispatch version read (`dispatchVersion`, absent before the first
   * dispatch): of concurrent dispatches each write lands once on the record it read, and a loser
   * reads again and merges again, so no dispatch's vehicles are lost and each dispatch is one
   * change of the item (one stream record, one event).
   */
  async recordDispatch(organizationId, resultId, dispatch, time) {
    const key = keys.routingResult(organizationId, resultId);
    for (let attempt = 0; attempt < maxDispatchAttempts; attempt++) {
      const output = await documentClient().send(
        new GetCommand({
          TableName: tableName(),
          Key: key,
          ConsistentRead: true,
          ProjectionExpression: "#dispatch, dispatchVersion",
          ExpressionAttributeNames: { "#dispatch": "dispatch" },
        }),
      );
      if (!output.Item) return;
      const version = typeof output.Item.dispatchVersion === "number" ? output.Item.dispatchVersion : 0;
      const previous = resultRecordSchema.shape.dispatch.safeParse(output.Item.dispatch ?? null);
      try {
        await documentClient().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: key,
            ConditionExpression:
              version === 0 ? "attribute_exists(PK) AND attribute_not_exists(dispatchVersion)" : "dispatchVersion = :version",
            UpdateExpression: "SET #dispatch = :dispatch, dispatchVersion = :next, updatedTime = :time",
            ExpressionAttributeNames: { "#dispatch": "dispatch" },
            ExpressionAttributeValues: {
              ":dispatch": withDispatch(previous.success ? previous.data : null, dispatch),
              ":next": version + 1,
              ":time": time,
              ...(version === 0 ? {} : { ":version": version }),
            },
          }),
        );
        return;
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        // Another dispatch wrote first (or the result is gone: the next read says so).
      }
    }
    throw concurrentUpdateError();
  },

  async list(organizationId, filter) {
    // A hub (asked for, or each hub a hub-limited token allows) is read from the by-hub index, so
    // no other hub's result is read and skipped.
    const hubIds = filter.hubId !== undefined ? [filter.hubId] : [...new Set(filter.allowedHubIds)];
    const page =
      hubIds.length > 0
        ? await queryPageAcross<Record<string, unknown>>(
            hubIds.map((hubId) => ({
              index: "GSI1",
              partition: keys.routingResultsByHub(organizationId, hubId),
              newestFirst: true,
              filter: createdFromFilter(filter),
            })),
            filter.limit,
            filter.cursor,
          )
        : await queryPage<Record<string, unknown>>({
            partition: keys.organizationPartition(organizationId),
            sortKeyPrefix: keys.routingResultPrefix,
            newestFirst: true,
            limit: filter.limit,
            cursor: filter.cursor,
            filter: createdFromFilter(filter),
          });
    return { items: page.items.map((item) => resultRecordSchema.parse(item)), nextCursor: page.nextCursor };
  },
};

/** ongoing/failed → done/failed; false when the result is gone or done already (another delivery finished it). */
export async function setFinal(
  organizationId: string,
  resultId: string,
  status: "done" | "failed",
  fields: Record<string, unknown>,
): Promise<boolean> {
  const names: Record<string, string> = { "#status": "status" };
  const values: Record<string, unknown> = { ":status": status, ":done": "done" };
  const sets = ["#status = :status"];
  Object.entries(fields).forEach(([field, value], i) => {
    names[`#f${i}`] = field;
    values[`:f${i}`] = value;
    sets.push(`#f${i} = :f${i}`);
  });
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.routingResult(organizationId, resultId),
        ConditionExpression: "attribute_exists(PK) AND #status <> :done",
        UpdateExpression: `SET ${sets.join(", ")}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}
