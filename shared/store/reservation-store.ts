import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { ReservationStore } from "#shared/domain/usage/reservations";
import { documentClient, isConditionalCheckFailed, tableName } from "#shared/store/dynamo";

/**
 * The reservation port over DynamoDB (shared/domain/usage/reservations.ts): one `UpdateItem` with
 * `ADD` under the condition that the counter stays within the cap. DynamoDB evaluates the condition
 * on the item's current value inside the write, so concurrent reservations serialise on the item
 * and never both pass a cap only one fits; no transaction, no read before the write.
 */
export const dynamoReservationStore: ReservationStore = {
  async reserve(counter, amount, cap) {
    const names = { "#used": counter.attribute, ...attributeNames(counter) };
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: counter.key,
          UpdateExpression: `ADD #used :amount${setItemAttributes(counter)}`,
          ConditionExpression: "attribute_not_exists(#used) OR #used <= :room",
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ":amount": amount, ":room": cap - amount, ...attributeValues(counter) },
        }),
      );
      return { granted: true };
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      const output = await documentClient().send(
        new GetCommand({
          TableName: tableName(),
          Key: counter.key,
          ConsistentRead: true,
          ProjectionExpression: "#used",
          ExpressionAttributeNames: { "#used": counter.attribute },
        }),
      );
      return { granted: false, used: Number(output.Item?.[counter.attribute] ?? 0) };
    }
  },

  async settle(counter, reserved, used) {
    const change = used - reserved;
    if (change === 0) return;
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: counter.key,
        UpdateExpression: `ADD #used :change${setItemAttributes(counter)}`,
        ExpressionAttributeNames: { "#used": counter.attribute, ...attributeNames(counter) },
        ExpressionAttributeValues: { ":change": change, ...attributeValues(counter) },
      }),
    );
  },
};

const itemEntries = (counter: { itemAttributes?: Record<string, string | number> }) => Object.entries(counter.itemAttributes ?? {});
const setItemAttributes = (counter: { itemAttributes?: Record<string, string | number> }) => {
  const entries = itemEntries(counter);
  return entries.length === 0 ? "" : ` SET ${entries.map((_, i) => `#item${i} = :item${i}`).join(", ")}`;
};
const attributeNames = (counter: { itemAttributes?: Record<string, string | number> }) =>
  Object.fromEntries(itemEntries(counter).map(([name], i) => [`#item${i}`, name]));
const attributeValues = (counter: { itemAttributes?: Record<string, string | number> }) =>
  Object.fromEntries(itemEntries(counter).map(([, value], i) => [`:item${i}`, value]));
