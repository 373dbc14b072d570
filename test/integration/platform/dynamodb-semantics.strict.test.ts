import { randomUUID } from "node:crypto";
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { provisionTable } from "#local/provision";
import { resetStrictDynamoDb, strictDynamoDb } from "#test/support/strict-dynamodb";

/**
 * The harness itself (local/dynamodb-semantics.ts): the production rules it models in front of
 * DynamoDB Local, seen from a raw SDK client with no retries, on a table of this file's own.
 */
const table = `semantics-${randomUUID().slice(0, 8)}`;
let client: DynamoDBClient;

const s = (value: string) => ({ S: value });
const key = (pk: string, sk = "A") => ({ PK: s(pk), SK: s(sk) });

async function failure(
  call: Promise<unknown>,
): Promise<Error & { CancellationReasons?: Array<{ Code?: string }>; $metadata?: { httpStatusCode?: number } }> {
  try {
    await call;
  } catch (error) {
    return error as Error;
  }
  throw new Error("the call succeeded");
}

async function exists(pk: string): Promise<boolean> {
  return (await client.send(new GetItemCommand({ TableName: table, Key: key(pk), ConsistentRead: true }))).Item !== undefined;
}

/** One transaction of the burst: check the shared parent item, put its own child. */
const checkParentAndPutChild = (parent: string, child: string) =>
  new TransactWriteItemsCommand({
    TransactItems: [
      { ConditionCheck: { TableName: table, Key: key(parent), ConditionExpression: "attribute_exists(PK)" } },
      { Put: { TableName: table, Item: { ...key(child), kind: s("child") }, ConditionExpression: "attribute_not_exists(PK)" } },
    ],
  });

beforeAll(async () => {
  // maxAttempts 1: the SDK's own retries would hide the shapes under test.
  client = new DynamoDBClient({ maxAttempts: 1 });
  await provisionTable(client, table);
});

afterEach(() => {
  resetStrictDynamoDb();
});

describe("transaction conflicts", () => {
  it("a 40-way burst of transactions checking one item: while the first holds it, the other 39 are cancelled with TransactionConflict on the checked item", async () => {
    const semantics = strictDynamoDb();
    const parent = `parent-${randomUUID()}`;
    await client.send(new PutItemCommand({ TableName: table, Item: key(parent) }));
    semantics.pauseReleases();
    const children = Array.from({ length: 40 }, () => `child-${randomUUID()}`);
    const outcomes = await Promise.allSettled(children.map((child) => client.send(checkParentAndPutChild(parent, child))));
    semantics.releaseHeldTransactions();

    const committed = outcomes.flatMap((outcome, index) => (outcome.status === "fulfilled" ? [children[index] as string] : []));
    expect(committed).toHaveLength(1);
    const refused = outcomes.flatMap((outcome) =>
      outcome.status === "rejected" ? [outcome.reason as Error & { CancellationReasons?: Array<{ Code?: string }> }] : [],
    );
    expect(refused).toHaveLength(39);
    for (const error of refused) {
      expect(error.name).toBe("TransactionCanceledException");
      expect(error.CancellationReasons?.map((reason) => reason.Code)).toEqual(["TransactionConflict", "None"]);
    }
    for (const child of children) expect(await exists(child)).toBe(committed.includes(child));
    expect(semantics.heldItemCount()).toBe(0);
  });

  it("a free-running 40-way burst: transactions overlapping in flight on the checked item never both commit, and each refusal names a holder in flight at the time", async () => {
    const semantics = strictDynamoDb();
    const parent = `parent-${randomUUID()}`;
    await client.send(new PutItemCommand({ TableName: table, Item: key(parent) }));
    const before = semantics.transactionLog().length;
    const children = Array.from({ length: 40 }, () => `child-${randomUUID()}`);
    const outcomes = await Promise.allSettled(children.map((child) => client.send(checkParentAndPutChild(parent, child))));
    // The last commit keeps its items for the configured hold after it answered.
    await expect.poll(() => semantics.heldItemCount()).toBe(0);
    const log = semantics.transactionLog().slice(before);
    expect(log).toHaveLength(40);

    const committed = log.filter((record) => record.outcome === "committed");
    const conflicts = log.filter((record) => record.outcome === "conflict");
    expect(committed.length + conflicts.length).toBe(40);
    expect(committed.length).toBe(outcomes.filter((outcome) => outcome.status === "fulfilled").length);
    expect(committed.length).toBeGreaterThanOrEqual(1);
    // Committed transactions never overlapped in flight (they share the checked item).
    const byArrival = [...committed].sort((a, b) => a.arrivedAt - b.arrivedAt);
    for (let index = 1; index < byArrival.length; index += 1) {
      expect(byArrival[index]!.arrivedAt).toBeGreaterThan(byArrival[index - 1]!.releasedAt as number);
    }
    // Each refused one arrived while a committed one held the item.
    for (const refusal of conflicts) {
      expect(refusal.conflictedWith.length).toBeGreaterThan(0);
      for (const holderId of refusal.conflictedWith) {
        const holder = log.find((record) => record.id === holderId)!;
        expect(holder.arrivedAt).toBeLessThan(refusal.arrivedAt);
        expect(holder.releasedAt).toBeGreaterThan(refusal.arrivedAt);
      }
    }
  });

  it("gathered transactions wait for each other: sent 300 ms apart they still race (the first commits, the second conflicts); a gate that times out lets the ones it has go", async () => {
    const semantics = strictDynamoDb();
    const parent = `parent-${randomUUID()}`;
    await client.send(new PutItemCommand({ TableName: table, Item: key(parent) }));
    const gathered = semantics.gatherTransactions(2, 30_000);
    const [first, second] = [`child-${randomUUID()}`, `child-${randomUUID()}`];
    const firstOutcome = client.send(checkParentAndPutChild(parent, first));
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Without the gate the first would long have committed and been released (10 ms hold).
    expect(await exists(first)).toBe(false);
    const secondOutcome = failure(client.send(checkParentAndPutChild(parent, second)));
    expect(await gathered).toBe(2);
    await firstOutcome;
    expect((await secondOutcome).CancellationReasons?.map((reason) => reason.Code)).toEqual(["TransactionConflict", "None"]);
    expect([await exists(first), await exists(second)]).toEqual([true, false]);

    // The gate is spent: the next transaction goes straight through; a new gate of 3 that only one reaches opens at its timeout.
    await expect.poll(() => semantics.heldItemCount()).toBe(0);
    await client.send(checkParentAndPutChild(parent, `child-${randomUUID()}`));
    const alone = semantics.gatherTransactions(3, 200);
    const late = `child-${randomUUID()}`;
    await client.send(checkParentAndPutChild(parent, late));
    expect(await alone).toBe(1);
    expect(await exists(late)).toBe(true);
  });

  it("PutItem, UpdateItem and DeleteItem on an item a transaction holds get TransactionConflictException, and succeed once it is released", async () => {
    const semantics = strictDynamoDb();
    const parent = `parent-${randomUUID()}`;
    await client.send(new PutItemCommand({ TableName: table, Item: key(parent) }));
    semantics.pauseReleases();
    await client.send(checkParentAndPutChild(parent, `child-${randomUUID()}`));

    const put = await failure(client.send(new PutItemCommand({ TableName: table, Item: { ...key(parent), n: s("1") } })));
    const update = await failure(
      client.send(
        new UpdateItemCommand({
          TableName: table,
          Key: key(parent),
          UpdateExpression: "SET n = :n",
          ExpressionAttributeValues: { ":n": s("2") },
        }),
      ),
    );
    const remove = await failure(client.send(new DeleteItemCommand({ TableName: table, Key: key(parent) })));
    for (const error of [put, update, remove]) {
      expect(error.name).toBe("TransactionConflictException");
      expect(error.$metadata?.httpStatusCode).toBe(400);
    }
    // A plain read is not refused (reads see the last committed image).
    expect(await exists(parent)).toBe(true);

    semantics.releaseHeldTransactions();
    await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: key(parent),
        UpdateExpression: "SET n = :n",
        ExpressionAttributeValues: { ":n": s("3") },
      }),
    );
    expect(semantics.counters().singleWriteConflicts).toBe(3);
  });
});

describe("throttling", () => {
  it("single-item calls and queries: ProvisionedThroughputExceededException, or ThrottlingException when configured so", async () => {
    const semantics = strictDynamoDb();
    semantics.configure({ throttleRate: 1 });
    for (const call of [
      client.send(new GetItemCommand({ TableName: table, Key: key("any") })),
      client.send(new PutItemCommand({ TableName: table, Item: key(`p-${randomUUID()}`) })),
      client.send(
        new QueryCommand({ TableName: table, KeyConditionExpression: "PK = :pk", ExpressionAttributeValues: { ":pk": s("any") } }),
      ),
    ]) {
      const error = await failure(call);
      expect(error.name).toBe("ProvisionedThroughputExceededException");
      expect(error.$metadata?.httpStatusCode).toBe(400);
    }
    semantics.configure({ throttleError: "ThrottlingException" });
    expect(
      (
        await failure(
          client.send(
            new UpdateItemCommand({
              TableName: table,
              Key: key("x"),
              UpdateExpression: "SET n = :n",
              ExpressionAttributeValues: { ":n": s("1") },
            }),
          ),
        )
      ).name,
    ).toBe("ThrottlingException");
  });

  it("transactions: TransactionCanceledException with a ThrottlingError reason, nothing written", async () => {
    const semantics = strictDynamoDb();
    const parent = `parent-${randomUUID()}`;
    await client.send(new PutItemCommand({ TableName: table, Item: key(parent) }));
    semantics.configure({ throttleRate: 1 });
    const child = `child-${randomUUID()}`;
    const error = await failure(client.send(checkParentAndPutChild(parent, child)));
    semantics.configure({ throttleRate: 0 });
    expect(error.name).toBe("TransactionCanceledException");
    const codes = error.CancellationReasons?.map((reason) => reason.Code) ?? [];
    expect(codes).toHaveLength(2);
    expect(codes.filter((code) => code === "ThrottlingError")).toHaveLength(1);
    expect(codes.every((code) => code === "ThrottlingError" || code === "None")).toBe(true);
    expect(await exists(child)).toBe(false);
  });

  it("batches: throttled items come back as UnprocessedItems / UnprocessedKeys (and all throttled is the exception)", async () => {
    const semantics = strictDynamoDb();
    const ids = Array.from({ length: 25 }, () => `b-${randomUUID()}`);
    semantics.configure({ throttleRate: 0.5, seed: 7 });
    const written = await client.send(
      new BatchWriteItemCommand({ RequestItems: { [table]: ids.map((id) => ({ PutRequest: { Item: key(id) } })) } }),
    );
    semantics.configure({ throttleRate: 0 });
    const unprocessed = (written.UnprocessedItems?.[table] ?? []).map((entry) => entry.PutRequest?.Item?.PK?.S as string);
    expect(unprocessed.length).toBeGreaterThan(0);
    expect(unprocessed.length).toBeLessThan(ids.length);
    for (const id of ids) expect(await exists(id)).toBe(!unprocessed.includes(id));

    semantics.configure({ throttleRate: 0.5, seed: 11 });
    const read = await client.send(
      new BatchGetItemCommand({ RequestItems: { [table]: { Keys: ids.map((id) => key(id)), ConsistentRead: true } } }),
    );
    const unread = read.UnprocessedKeys?.[table]?.Keys ?? [];
    expect(unread.length).toBeGreaterThan(0);
    expect(read.UnprocessedKeys?.[table]?.ConsistentRead).toBe(true);
    const returned = (read.Responses?.[table] ?? []).map((item) => item.PK?.S as string);
    const unreadIds = unread.map((entry) => entry.PK?.S as string);
    expect(returned.filter((id) => unreadIds.includes(id))).toEqual([]);
    for (const id of ids) if (!unprocessed.includes(id)) expect(returned.includes(id) || unreadIds.includes(id)).toBe(true);

    semantics.configure({ throttleRate: 1 });
    expect(
      (
        await failure(
          client.send(new BatchWriteItemCommand({ RequestItems: { [table]: [{ PutRequest: { Item: key(`b-${randomUUID()}`) } }] } })),
        )
      ).name,
    ).toBe("ProvisionedThroughputExceededException");
  });

  it("a rate of 5% throttles about 5% of calls, the same calls for the same seed", async () => {
    const semantics = strictDynamoDb();
    const run = async () => {
      semantics.configure({ throttleRate: 0.05, seed: 42 });
      const results: boolean[] = [];
      for (let index = 0; index < 200; index += 1) {
        try {
          await client.send(new GetItemCommand({ TableName: table, Key: key("any") }));
          results.push(true);
        } catch {
          results.push(false);
        }
      }
      return results;
    };
    const first = await run();
    const second = await run();
    expect(second).toEqual(first);
    const throttledShare = first.filter((ok) => !ok).length / first.length;
    expect(throttledShare).toBeGreaterThan(0.01);
    expect(throttledShare).toBeLessThan(0.12);
  });
});

describe("global secondary index lag", () => {
  const indexed = (pk: string, partition: string, sortKey: string, extra: Record<string, { S: string }> = {}) => ({
    ...key(pk),
    GSI1PK: s(partition),
    GSI1SK: s(sortKey),
    ...extra,
  });
  const queryIndex = async (partition: string) =>
    (
      await client.send(
        new QueryCommand({
          TableName: table,
          IndexName: "GSI1",
          KeyConditionExpression: "GSI1PK = :p",
          ExpressionAttributeValues: { ":p": s(partition) },
        }),
      )
    ).Items ?? [];

  it("during the lag an index query misses a new item, shows an updated item's previous image and still shows a deleted item; the table itself is current", async () => {
    const semantics = strictDynamoDb();
    const partition = `g-${randomUUID()}`;
    const kept = `kept-${randomUUID()}`;
    const changed = `changed-${randomUUID()}`;
    const moved = `moved-${randomUUID()}`;
    const removed = `removed-${randomUUID()}`;
    for (const pk of [kept, changed, moved, removed])
      await client.send(new PutItemCommand({ TableName: table, Item: indexed(pk, partition, pk, { name: s("old") }) }));
    semantics.configure({ indexLag: "manual" });
    expect((await queryIndex(partition)).map((item) => item.PK?.S).sort()).toEqual([kept, changed, moved, removed].sort());

    const added = `added-${randomUUID()}`;
    await client.send(new PutItemCommand({ TableName: table, Item: indexed(added, partition, added) }));
    await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: key(changed),
        UpdateExpression: "SET #n = :n",
        ExpressionAttributeNames: { "#n": "name" },
        ExpressionAttributeValues: { ":n": s("new") },
      }),
    );
    await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: key(moved),
        UpdateExpression: "SET GSI1PK = :p",
        ExpressionAttributeValues: { ":p": s(`${partition}-other`) },
      }),
    );
    await client.send(new DeleteItemCommand({ TableName: table, Key: key(removed) }));

    const lagging = await queryIndex(partition);
    expect(lagging.map((item) => item.PK?.S).sort()).toEqual([kept, changed, moved, removed].sort());
    expect(lagging.find((item) => item.PK?.S === changed)?.name?.S).toBe("old");
    expect(await queryIndex(`${partition}-other`)).toEqual([]);
    // The base table is strongly consistent as ever.
    expect(await exists(added)).toBe(true);
    expect(await exists(removed)).toBe(false);

    await semantics.propagateIndexes();
    const current = await queryIndex(partition);
    expect(current.map((item) => item.PK?.S).sort()).toEqual([kept, changed, added].sort());
    expect(current.find((item) => item.PK?.S === changed)?.name?.S).toBe("new");
    expect((await queryIndex(`${partition}-other`)).map((item) => item.PK?.S)).toEqual([moved]);
  });

  it("a timed lag: a new item reaches the index once the lag has passed", async () => {
    const semantics = strictDynamoDb();
    semantics.configure({ indexLag: 3_000 });
    const partition = `g-${randomUUID()}`;
    const added = `added-${randomUUID()}`;
    await client.send(new PutItemCommand({ TableName: table, Item: indexed(added, partition, added) }));
    expect(await queryIndex(partition)).toEqual([]);
    await expect
      .poll(async () => (await queryIndex(partition)).map((item) => item.PK?.S), { timeout: 20_000, interval: 100 })
      .toEqual([added]);
  });
});
