import { bucketName, s3Sdk } from "#shared/blob/s3-sdk";
import type { RoutingResultStore } from "#shared/domain/routing-results/service";
import { resultBodySchema, type RoutingResultBody } from "#shared/domain/routing-results/schema";
import { objectKeys } from "#shared/store/keys";
import { dynamoRoutingResultItems, setFinal } from "#shared/store/routing-result-items";

/**
 * Routing results. The item (`ORG#o` / `RES#id`, GSI1 by hub) holds the metadata, status and
 * summary; the body (routes with their trips, dropped visits) is one JSON object in S3
 * (`results/<o>/<id>.json`; bodies of the earlier layout, `org/<o>/routing-results/<id>.json`, are still read), because 1,500 visits' trips and drops exceed DynamoDB's
 * 400 KB item limit. The body is written before the item turns `done`, so a done result always
 * has its body; a retried run overwrites both.
 */
export const dynamoRoutingResultStore: RoutingResultStore = {
  ...dynamoRoutingResultItems,

  async readBody(organizationId, resultId) {
    const { client, sdk } = await s3Sdk();
    // Bodies written before the kind-first layout stay where they are: read there when the new key has none.
    for (const key of [
      objectKeys.routingResultBody(organizationId, resultId),
      objectKeys.legacyRoutingResultBody(organizationId, resultId),
    ]) {
      const output = await client.send(new sdk.GetObjectCommand({ Bucket: bucketName(), Key: key })).catch((error: unknown) => {
        if ((error as { name?: string }).name === "NoSuchKey") return undefined;
        throw error;
      });
      if (output)
        return resultBodySchema.parse(JSON.parse(await (output.Body as { transformToString(): Promise<string> }).transformToString()));
    }
    return undefined;
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
    return setFinal(organizationId, resultId, "done", {
      summary: changes.summary,
      message: null,
      updatedTime: changes.time,
      finishedTime: changes.time,
    });
  },
};
