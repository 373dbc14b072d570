import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { NotFoundError } from "#shared/domain/errors";
import { appConfig } from "#shared/config/env";
import { contentionExhausted } from "#shared/store/contention-retry";
import { retryBudgetMs } from "#shared/store/retry-budget";
import { documentClient, tableName, type TransactItem, transactionCancellationCodes } from "#shared/store/dynamo";
import { concurrentUpdateError } from "#shared/store/items";
import type { ItemKey } from "#shared/store/keys";

/**
 * The one store toolkit for `TransactWriteItems` (docs/architecture.md, "Writes without shared
 * items"): item builders, labelled transactions with their failures decoded by label (never by
 * position), and parent leases. (Retries of conflicts and throttles are the client's one retry
 * layer, shared/store/contention-retry.ts.)
 *
 * A transaction names only items its write owns: the entity, its own index/guard/marker items, and
 * condition checks of items no independent write of a sibling names. A parent that every sibling
 * depends on (a data type for its records, a hub for its vehicles and visits) is never named;
 * instead it is confirmed by a strongly consistent read right before the commit (`Lease`), and the
 * parent's rare writer (type change or delete, hub delete) fences the parent and waits out the
 * lease before it looks at the children.
 */

type Condition = {
  ConditionExpression: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
};

export function put(item: Record<string, unknown>, condition?: Condition): TransactItem {
  return { Put: { TableName: tableName(), Item: item, ...condition } };
}

export function remove(key: ItemKey, condition?: Condition): TransactItem {
  return { Delete: { TableName: tableName(), Key: key, ...condition } };
}

export function conditionCheck(key: ItemKey, condition: Condition): TransactItem {
  return { ConditionCheck: { TableName: tableName(), Key: key, ...condition } };
}

/** Create the entity; its key must be free. */
export function putNew(key: ItemKey, attributes: Record<string, unknown>): TransactItem {
  return put({ ...attributes, ...key, version: 1 }, { ConditionExpression: "attribute_not_exists(PK)" });
}

/** Replace the entity if it still has `expectedVersion`. */
export function putVersioned(key: ItemKey, attributes: Record<string, unknown>, expectedVersion: number): TransactItem {
  return put(
    { ...attributes, ...key, version: expectedVersion + 1 },
    { ConditionExpression: "version = :expected", ExpressionAttributeValues: { ":expected": expectedVersion } },
  );
}

/** Delete the entity if it still has `expectedVersion`. */
export function deleteVersioned(key: ItemKey, expectedVersion: number): TransactItem {
  return remove(key, { ConditionExpression: "version = :expected", ExpressionAttributeValues: { ":expected": expectedVersion } });
}

/**
 * Guard items (uniqueness claims: data type names, extension entities, unique record values): one
 * owner attribute names who holds the guard. A claim succeeds when the guard is free or already the
 * owner's; a release deletes it only if it is still the owner's.
 */
export function claimGuard(key: ItemKey, ownerAttribute: string, ownerId: string, attributes: Record<string, unknown>): TransactItem {
  return put(
    { ...attributes, ...key, [ownerAttribute]: ownerId },
    {
      ConditionExpression: "attribute_not_exists(PK) OR #owner = :owner",
      ExpressionAttributeNames: { "#owner": ownerAttribute },
      ExpressionAttributeValues: { ":owner": ownerId },
    },
  );
}

export function releaseGuard(key: ItemKey, ownerAttribute: string, ownerId: string): TransactItem {
  return remove(key, {
    ConditionExpression: "attribute_not_exists(PK) OR #owner = :owner",
    ExpressionAttributeNames: { "#owner": ownerAttribute },
    ExpressionAttributeValues: { ":owner": ownerId },
  });
}

/** After a versioned write lost its condition: 404 when the item is gone, else 409 (changed meanwhile). */
export async function versionConflict(key: ItemKey): Promise<Error> {
  const output = await documentClient().send(
    new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true, ProjectionExpression: "PK" }),
  );
  return output.Item ? concurrentUpdateError() : new NotFoundError();
}

// ------------------------------------------------------------------ leases

/**
 * How long a parent confirmed by a consistent read may be relied on: a transaction attempt that
 * depends on it starts within this time of the read being issued, or the parent is read again.
 */
export const parentLeaseMs = () => appConfig().DYNAMODB_PARENT_LEASE_MS;
/**
 * What a parent's rare writer waits after its fence is written before it looks at the children:
 * the lease, plus the longest time an attempt started within the lease takes to reach DynamoDB.
 */
export const fenceWaitMs = () => parentLeaseMs() + Math.max(500, parentLeaseMs() / 2);

/** Confirms a parent (strongly consistent read); throws the domain error when it is gone, fenced or changed. */
export type Lease = () => Promise<void>;

class LeaseExpired extends Error {
  override name = "LeaseExpired";
}

export const waitOutLeases = () => new Promise((resolve) => setTimeout(resolve, fenceWaitMs()));

// ------------------------------------------------------------------ labelled transactions

/** An attempt whose leases would have expired, re-confirmed at most this many times before it is a 503. */
const MAX_LEASE_RENEWALS = 10;

/**
 * Runs one `TransactWriteItems` whose items each carry a label saying what a failed condition on it
 * means. Resolves to undefined when it committed, or to the labels of the items whose condition
 * failed; any other error is thrown. Conflicts and throttles are retried by the client's one retry
 * layer (contention-retry.ts) and end, when its budget is spent, as 503 `sys-503`, never as 409.
 *
 * `leases` are confirmed before the first attempt and again before any attempt (the retry layer's
 * included: the check runs per attempt) that would start the lease (`parentLeaseMs()`) or later after the
 * confirming reads were issued.
 */
export async function transactLabelled<Label>(
  items: ReadonlyArray<readonly [TransactItem, Label]>,
  options: { leases?: readonly Lease[] } = {},
): Promise<Label[] | undefined> {
  const leases = options.leases ?? [];
  const startedAt = Date.now();
  const budget = retryBudgetMs();
  for (let renewals = 0; ; renewals += 1) {
    const command = new TransactWriteCommand({ TransactItems: items.map(([item]) => item) });
    if (leases.length > 0) {
      if (renewals > MAX_LEASE_RENEWALS || (renewals > 0 && Date.now() - startedAt > budget)) throw contentionExhausted("conflict");
      const issued = Date.now();
      const leaseMs = parentLeaseMs();
      await Promise.all(leases.map((confirm) => confirm()));
      command.middlewareStack.add(
        (next) => async (args) => {
          if (Date.now() - issued >= leaseMs) throw new LeaseExpired("parent lease expired before the attempt");
          return next(args);
        },
        { step: "deserialize", priority: "low" },
      );
    }
    try {
      await documentClient().send(command);
      return undefined;
    } catch (error) {
      if (error instanceof LeaseExpired || (error instanceof Error && error.name === "LeaseExpired")) continue;
      const codes = transactionCancellationCodes(error);
      // Only failed conditions are the caller's to explain; anything else (an invalid item) is not a
      // conflict and must not read as one, and contention is a 503, not a 409.
      if (!codes || codes.some((code) => !["None", "ConditionalCheckFailed", "TransactionConflict", "ThrottlingError"].includes(code)))
        throw error;
      if (!codes.includes("ConditionalCheckFailed")) throw contentionExhausted(codes.includes("ThrottlingError") ? "throttle" : "conflict");
      return items.flatMap(([, label], index) => (codes[index] === "ConditionalCheckFailed" ? [label] : []));
    }
  }
}
