import { DeleteCommand, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { ConflictError, NotFoundError } from "#shared/domain/errors";
import { documentClient, isConditionalCheckFailed, tableName } from "#shared/store/dynamo";
import { type ItemKey, withoutStorageAttributes } from "#shared/store/keys";

/**
 * Versioned single-item writes shared by every resource store. Each item carries a `version`
 * number; a replace is conditional on the version the caller read, so two concurrent updates can
 * never silently overwrite each other (the loser gets a 409 and retries).
 */
export interface Versioned<T> {
  value: T;
  version: number;
}

export async function getVersioned<T>(key: ItemKey): Promise<Versioned<T> | undefined> {
  const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: key }));
  if (!output.Item) return undefined;
  return { value: withoutStorageAttributes(output.Item) as T, version: Number(output.Item.version ?? 0) };
}

/** Creates the item; false when an item with the same key exists already. */
export async function insertItem(key: ItemKey, attributes: Record<string, unknown>): Promise<boolean> {
  try {
    await documentClient().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...attributes, ...key, version: 1 },
        ConditionExpression: "attribute_not_exists(PK)",
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}

/**
 * An update that SETs each of `fields` (REMOVEs those undefined), every name through a placeholder
 * (several field names are reserved words). Built from the object, so no field list is kept by hand.
 * `ExpressionAttributeNames` also maps `#version`; add the condition's own values to the values.
 */
export function updateSettingFields(fields: Record<string, unknown>): {
  UpdateExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
} {
  const names: Record<string, string> = { "#version": "version" };
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  const removes: string[] = [];
  Object.entries(fields).forEach(([name, value], index) => {
    if (name === "version") {
      values[":version"] = value;
      sets.push("#version = :version");
      return;
    }
    names[`#f${index}`] = name;
    if (value === undefined) removes.push(`#f${index}`);
    else {
      values[`:f${index}`] = value;
      sets.push(`#f${index} = :f${index}`);
    }
  });
  const expression = [sets.length > 0 ? `SET ${sets.join(", ")}` : "", removes.length > 0 ? `REMOVE ${removes.join(", ")}` : ""];
  return {
    UpdateExpression: expression.filter(Boolean).join(" "),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

export const concurrentUpdateError = () =>
  new ConflictError("The resource was changed by another request at the same time; read it again and retry.", "sys-410");

/** Replaces the whole item if it still has `expectedVersion`. */
export async function replaceItem(key: ItemKey, attributes: Record<string, unknown>, expectedVersion: number): Promise<void> {
  try {
    await documentClient().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...attributes, ...key, version: expectedVersion + 1 },
        ConditionExpression: "attribute_exists(PK) AND version = :expected",
        ExpressionAttributeValues: { ":expected": expectedVersion },
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
    const stillThere = (error as { Item?: unknown }).Item !== undefined;
    throw stillThere ? concurrentUpdateError() : new NotFoundError();
  }
}

/** Deletes the item; false when it did not exist (or no longer has `expectedVersion`, when given). */
export async function deleteItem(key: ItemKey, expectedVersion?: number): Promise<boolean> {
  try {
    await documentClient().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: key,
        ConditionExpression: expectedVersion === undefined ? "attribute_exists(PK)" : "version = :expected",
        ExpressionAttributeValues: expectedVersion === undefined ? undefined : { ":expected": expectedVersion },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}
