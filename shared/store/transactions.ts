import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { NotFoundError } from "#shared/domain/errors";
import { documentClient, tableName, type TransactItem, transactionCancellationCodes } from "#shared/store/dynamo";
import { concurrentUpdateError } from "#shared/store/items";
import type { ItemKey } from "#shared/store/keys";

/**
 * The one store toolkit for `TransactWriteItems` (docs/architecture.md, "Writes without shared
 * items"): item builders, labelled transactions with their failures decoded by label (never by
 * position), retries of conflicts and throttles, and parent leases.
 *
 * A transaction names only items its write owns: the entity, its own index/guard/marker items, and
 * condition checks of items no independent write of a sibling names. A parent that every sibling
 * depends on (a data type for its records, a hub for its vehicles and visits) is never named;
 * instead it is confirmed by a strongly consistent read right before the commit (`Lease`), and the
 * parent's rare writer (type change or delete, hub delete) fences the parent and waits out the
 * lease before it looks at the children.
 */

type Condition = { ConditionExpression: string; ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Record<string, unknown> };

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
  return put({ ...attributes, ...key, version: expectedVersion + 1 }, { ConditionExpression: "version = :expected", ExpressionAttributeValues: { ":expected": expectedVersion } });
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
    { ConditionExpression: "attribute_not_exists(PK) OR #owner = :owner", ExpressionAttributeNames: { "#owner": ownerAttribute }, ExpressionAttributeValues: { ":owner": ownerId } },
  );
}

export function releaseGuard(key: ItemKey, ownerAttribute: string, ownerId: string): TransactItem {
  return remove(key, { ConditionExpression: "attribute_not_exists(PK) OR #owner = :owner", ExpressionAttributeNames: { "#owner": ownerAttribute }, ExpressionAttributeValues: { ":owner": ownerId } });
}

/** After a versioned write lost its condition: 404 when the item is gone, else 409 (changed meanwhile). */
export async function versionConflict(key: ItemKey): Promise<Error> {
  const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true, ProjectionExpression: "PK" }));
  return output.Item ? concurrentUpdateError() : new NotFoundError();
}

// ------------------------------------------------------------------ leases

/**
 * How long a parent confirmed by a consistent read may be relied on: a transaction attempt that
 * depends on it starts within this time of the read being issued, or the parent is read again.
 */
export const PARENT_LEASE_MS = 1000;
/**
 * What a parent's rare writer waits after its fence is written before it looks at the children:
 * the lease, plus the longest time an attempt started within the lease takes to reach DynamoDB.
 */
export const FENCE_WAIT_MS = PARENT_LEASE_MS + 500;

/** Confirms a parent (strongly consistent read); throws the domain error when it is gone, fenced or changed. */
export type Lease = () => Promise<void>;

class LeaseExpired extends Error {
  override name = "LeaseExpired";
}

export const waitOutLeases = () => new Promise((resolve) => setTimeout(resolve, FENCE_WAIT_MS));

// ------------------------------------------------------------------ labelled transactions

/** Retries of a transaction cancelled only by conflicts or throttling: attempts and the backoff's base and cap. */
const RETRY = { attempts: 8, baseMs: 15, capMs: 400 };
const retryable = new Set(["TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"]);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"). */
const backoff = (attempt: number) => Math.random() * Math.min(RETRY.capMs, RETRY.baseMs * 2 ** attempt);

/** Counts of transaction attempts and of attempts cancelled by a conflict, for benchmarks and tests. */
export const transactionStats = { attempts: 0, conflicted: 0, throttled: 0 };

function isThrottle(error: unknown): boolean {
  return error instanceof Error && ["ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded"].includes(error.name);
}

/**
 * Runs one `TransactWriteItems` whose items each carry a label saying what a failed condition on it
 * means. Resolves to undefined when it committed, or to the labels of the items whose condition
 * failed. A cancellation only by conflicting transactions or throttling is retried with jittered
 * exponential backoff (nothing was applied); when the attempts are spent it is a 409 `sys-410`.
 *
 * `leases` are confirmed before the first attempt and again before any attempt that would start
 * after `PARENT_LEASE_MS` from the confirming reads (checked per SDK attempt, so the SDK's own
 * retries never outlive a lease either).
 */
export async function transactLabelled<Label>(items: ReadonlyArray<readonly [TransactItem, Label]>, options: { leases?: readonly Lease[] } = {}): Promise<Label[] | undefined> {
  const leases = options.leases ?? [];
  let leaseStart = -Infinity;
  for (let attempt = 0; ; attempt += 1) {
    if (leases.length > 0 && Date.now() - leaseStart >= PARENT_LEASE_MS) {
      const issued = Date.now();
      await Promise.all(leases.map((confirm) => confirm()));
      leaseStart = issued;
    }
    const command = new TransactWriteCommand({ TransactItems: items.map(([item]) => item) });
    if (leases.length > 0) {
      const start = leaseStart;
      command.middlewareStack.add(
        (next) => async (args) => {
          if (Date.now() - start >= PARENT_LEASE_MS) throw new LeaseExpired("parent lease expired before the attempt");
          return next(args);
        },
        { step: "deserialize", priority: "low" },
      );
    }
    transactionStats.attempts += 1;
    try {
      await documentClient().send(command);
      return undefined;
    } catch (error) {
      if (error instanceof LeaseExpired) {
        attempt -= 1;
        continue;
      }
      if (isThrottle(error)) {
        transactionStats.throttled += 1;
        if (attempt + 1 >= RETRY.attempts) throw error;
        await sleep(backoff(attempt));
        continue;
      }
      const codes = transactionCancellationCodes(error);
      // Only failed conditions, conflicts and throttles are the caller's to explain or ours to retry;
      // anything else (an invalid item) is not a conflict and must not read as one.
      if (!codes || codes.some((code) => code !== "None" && code !== "ConditionalCheckFailed" && !retryable.has(code))) throw error;
      if (codes.includes("TransactionConflict")) transactionStats.conflicted += 1;
      const failed = items.flatMap(([, label], index) => (codes[index] === "ConditionalCheckFailed" ? [label] : []));
      if (failed.length > 0) return failed;
      if (attempt + 1 >= RETRY.attempts) throw concurrentUpdateError();
      await sleep(backoff(attempt));
    }
  }
}
