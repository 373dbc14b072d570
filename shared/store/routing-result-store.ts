import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { bucketName, s3Sdk } from "#shared/blob/s3-sdk";
import type { ResultListFilter, RoutingResultStore } from "#shared/domain/routing-results/service";
import {
  resultBodySchema,
  resultRecordSchema,
  type RoutingResultBody,
  type RoutingResultRecord,
} from "#shared/domain/routing-results/schema";
import { documentClient, isConditionalCheckFailed, tableName } from "#shared/store/dynamo";
import { keys, objectKeys } from "#shared/store/keys";
import { type PartitionRead, queryPage, queryPageAcross } from "#shared/store/pagination";

/**
 * Routing results. The item (`ORG#o` / `RES#id`, GSI1 by hub) holds the metadata, status and
 * summary; the body (routes with their trips, dropped visits) is one JSON object in S3
 * (`org/<o>/routing-results/<id>.json`), because 1,500 visits' trips and drops exceed DynamoDB's
 * 400 KB item limit. The body is written before the item turns `done`, so a done result always
 * has its body; a retried run overwrites both.
 */
function resultItem(result: RoutingResultRecord): Record<string, unknown> {
  return {
    ...keys.routingResult(result.organizationId, result._id),
    ...result,
    entity: "routingResult",
    GSI1PK: keys.routingResultsByHub(result.organizationId, result.hubId),
    GSI1SK: `${keys.routingResultPrefix}${result._id}`,
  };
}

function createdFromFilter(filter: ResultListFilter): PartitionRead["filter"] {
  return filter.createdFrom !== undefined ? { expression: "createdFrom = :createdFrom", values: { ":createdFrom": filter.createdFrom } } : undefined;
}

export const dynamoRoutingResultStore: RoutingResultStore = {
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

  async readBody(organizationId, resultId) {
    const { client, sdk } = await s3Sdk();
    try {
      const output = await client.send(new sdk.GetObjectCommand({ Bucket: bucketName(), Key: objectKeys.routingResultBody(organizationId, resultId) }));
      return resultBodySchema.parse(JSON.parse(await (output.Body as { transformToString(): Promise<string> }).transformToString()));
    } catch (error) {
      if ((error as { name?: string }).name === "NoSuchKey") return undefined;
      throw error;
    }
  },

  async complete(organizationId, resultId, body: RoutingResultBody, changes) {
    const { client, sdk } = await s3Sdk();
    await client.send(
      new sdk.PutObjectCommand({
        Bucket: bucketName(),
        Key: objectKeys.routingResultBody(organizationId, resultId),
        Body: JSON.stringify(body),
        ContentType: "application/json",
      }),
    );
    return setFinal(organizationId, resultId, "done", { summary: changes.summary, message: null, updatedTime: changes.time, finishedTime: changes.time });
  },

  async fail(organizationId, resultId, message, time) {
    return setFinal(organizationId, resultId, "failed", { message, updatedTime: time, finishedTime: time });
  },

  async recordDispatch(organizationId, resultId, dispatch, time) {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.routingResult(organizationId, resultId),
        ConditionExpression: "attribute_exists(PK)",
        UpdateExpression: "SET #dispatch = :dispatch, updatedTime = :time",
        ExpressionAttributeNames: { "#dispatch": "dispatch" },
        ExpressionAttributeValues: { ":dispatch": dispatch, ":time": time },
      }),
    );
  },

  async list(organizationId, filter) {
    // A hub (asked for, or each hub a hub-limited token allows) is read from the by-hub index, so
    // no other hub's result is read and skipped.
    const hubIds = filter.hubId !== undefined ? [filter.hubId] : [...new Set(filter.allowedHubIds)];
    const page =
      hubIds.length > 0
        ? await queryPageAcross<Record<string, unknown>>(
            hubIds.map((hubId) => ({ index: "GSI1", partition: keys.routingResultsByHub(organizationId, hubId), newestFirst: true, filter: createdFromFilter(filter) })),
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
async function setFinal(organizationId: string, resultId: string, status: "done" | "failed", fields: Record<string, unknown>): Promise<boolean> {
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
