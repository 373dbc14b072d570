import { randomUUID } from "node:crypto";
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  type ConsumedCapacity,
  CreateTableCommand,
  DeleteItemCommand,
  DeleteTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { costOf, type IndexDefinition } from "#local/dynamodb-capacity";
import { type DynamoDbSemanticsProxy, type Item, startDynamoDbSemanticsProxy } from "#local/dynamodb-semantics";

/**
 * The capture path of `npm run bench:writes` (local/dynamodb-semantics.ts `capture`, priced by
 * local/dynamodb-capacity.ts) against the capacity DynamoDB Local itself reports
 * (`ReturnConsumedCapacity: INDEXES`), call by call, on a table of this file's own with two global
 * secondary indexes. Where DynamoDB Local reports it the two must agree: the base table's units of
 * every write, the index units where an entry is created or removed, and every read — a projected
 * GetItem, BatchGetItem or TransactGetItems included, which DynamoDB charges on the whole item.
 * DynamoDB Local does not report the capacity of a refused write; it prices an index entry updated
 * in place by the larger image, a transaction's index entries at 2 per KB and a ConditionCheck at
 * 2 whatever the checked item's size, where the model follows the developer guide (the new entry;
 * plain writes; 2 per KB of the checked item): those rules are tested in
 * test/unit/platform/dynamodb-capacity.test.ts, and the calls here keep clear of them.
 */
const table = `capacity-${randomUUID().slice(0, 8)}`;
const indexes: IndexDefinition[] = [
  { indexName: "Idx1", partitionKey: "G1" },
  { indexName: "Idx2", partitionKey: "G2" },
];
let proxy: DynamoDbSemanticsProxy;
let client: DynamoDBClient;

const s = (value: string) => ({ S: value });
const key = (pk: string) => ({ PK: s(pk), SK: s("A") });
const item = (pk: string, bytes: number, extra: Item = {}): Item => ({ ...key(pk), ...extra, body: s("x".repeat(bytes)) });
const R = { ReturnConsumedCapacity: "INDEXES" as const };

/** What the model priced the one call just made, split like DynamoDB's answer. */
function priced() {
  const calls = proxy.takeCaptured();
  expect(calls).toHaveLength(1);
  const cost = costOf(calls[0] as (typeof calls)[number], indexes);
  return { table: cost.writeUnits - cost.indexWriteUnits + cost.readUnits, indexes: cost.indexWriteUnits };
}
const reported = (consumed: ConsumedCapacity | ConsumedCapacity[] | undefined) => {
  const one = (Array.isArray(consumed) ? consumed[0] : consumed) as ConsumedCapacity;
  const indexUnits = Object.values(one.GlobalSecondaryIndexes ?? {}).reduce((sum, index) => sum + (index.CapacityUnits ?? 0), 0);
  return { table: one.Table?.CapacityUnits ?? one.CapacityUnits ?? 0, indexes: indexUnits };
};

beforeAll(async () => {
  const upstream = inject("localEnvironment").DYNAMODB_LOCAL_ENDPOINT as string;
  proxy = await startDynamoDbSemanticsProxy(upstream, { conflicts: false, capture: true });
  client = new DynamoDBClient({ endpoint: proxy.endpoint, maxAttempts: 1 });
  await client.send(
    new CreateTableCommand({
      TableName: table,
      BillingMode: "PAY_PER_REQUEST",
      AttributeDefinitions: ["PK", "SK", "G1", "G2"].map((name) => ({ AttributeName: name, AttributeType: "S" })),
      KeySchema: [
        { AttributeName: "PK", KeyType: "HASH" },
        { AttributeName: "SK", KeyType: "RANGE" },
      ],
      GlobalSecondaryIndexes: indexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [{ AttributeName: index.partitionKey, KeyType: "HASH" }],
        Projection: { ProjectionType: "ALL" },
      })),
    }),
  );
  proxy.takeCaptured();
});

afterAll(async () => {
  await client?.send(new DeleteTableCommand({ TableName: table })).catch(() => undefined);
  await proxy?.stop();
});

describe("captured calls priced like DynamoDB Local's ReturnConsumedCapacity", () => {
  it("writes: new items in two indexes, a shrinking put that leaves an index, a shrinking update, a batch, a transaction, a delete", async () => {
    const put = await client.send(new PutItemCommand({ TableName: table, Item: item("a", 2000, { G1: s("g"), G2: s("h") }), ...R }));
    expect(priced()).toEqual(reported(put.ConsumedCapacity));
    expect(reported(put.ConsumedCapacity)).toEqual({ table: 2, indexes: 4 });

    const grown = await client.send(new PutItemCommand({ TableName: table, Item: item("a", 5000, { G1: s("g"), G2: s("h") }), ...R }));
    expect(priced().table).toBe(reported(grown.ConsumedCapacity).table);

    // Leaves Idx2 (one delete of the old 5 KB entry); Idx1's entry is updated in place (see above).
    const left = await client.send(new PutItemCommand({ TableName: table, Item: item("a", 10, { G1: s("g") }), ...R }));
    const leftPriced = priced();
    expect(leftPriced.table).toBe(reported(left.ConsumedCapacity).table);
    expect(leftPriced.table).toBe(5);
    expect(left.ConsumedCapacity?.GlobalSecondaryIndexes?.Idx2?.CapacityUnits).toBe(5);

    await client.send(new PutItemCommand({ TableName: table, Item: item("b", 3000), ...R }));
    proxy.takeCaptured();
    const shrunk = await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: key("b"),
        UpdateExpression: "SET body = :b",
        ExpressionAttributeValues: { ":b": s("") },
        ...R,
      }),
    );
    expect(priced()).toEqual(reported(shrunk.ConsumedCapacity));
    expect(reported(shrunk.ConsumedCapacity).table).toBe(3);

    const batch = await client.send(
      new BatchWriteItemCommand({
        RequestItems: { [table]: [{ PutRequest: { Item: item("c", 1500) } }, { PutRequest: { Item: item("d", 100) } }] },
        ...R,
      }),
    );
    expect(priced()).toEqual(reported(batch.ConsumedCapacity));
    expect(reported(batch.ConsumedCapacity).table).toBe(3);

    const transaction = await client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: table, Item: item("e", 1500) } },
          { ConditionCheck: { TableName: table, Key: key("d"), ConditionExpression: "attribute_exists(PK)" } },
        ],
        ...R,
      }),
    );
    expect(priced().table).toBe(reported(transaction.ConsumedCapacity).table);
    expect(reported(transaction.ConsumedCapacity).table).toBe(4 + 2);

    const removed = await client.send(new DeleteItemCommand({ TableName: table, Key: key("a"), ...R }));
    expect(priced()).toEqual(reported(removed.ConsumedCapacity));
  });

  it("reads are priced on the whole item, whatever the projection", async () => {
    await client.send(new PutItemCommand({ TableName: table, Item: item("r", 5000, { G1: s("reads") }) }));
    await client.send(new PutItemCommand({ TableName: table, Item: item("r2", 5000) }));
    proxy.takeCaptured();
    const reads = [
      new GetItemCommand({ TableName: table, Key: key("r"), ...R }),
      new GetItemCommand({ TableName: table, Key: key("r"), ProjectionExpression: "PK", ...R }),
      new GetItemCommand({ TableName: table, Key: key("r"), ProjectionExpression: "PK", ConsistentRead: true, ...R }),
      new GetItemCommand({ TableName: table, Key: key("none"), ...R }),
      new QueryCommand({ TableName: table, KeyConditionExpression: "PK = :p", ExpressionAttributeValues: { ":p": s("r") }, ...R }),
      new QueryCommand({
        TableName: table,
        IndexName: "Idx1",
        KeyConditionExpression: "G1 = :g",
        ExpressionAttributeValues: { ":g": s("reads") },
        ...R,
      }),
      new BatchGetItemCommand({ RequestItems: { [table]: { Keys: [key("r"), key("r2")], ProjectionExpression: "SK" } }, ...R }),
      new TransactGetItemsCommand({
        TransactItems: [{ Get: { TableName: table, Key: key("r"), ProjectionExpression: "SK" } }],
        ReturnConsumedCapacity: "TOTAL",
      }),
    ];
    const seen: Array<{ table: number; indexes: number }> = [];
    for (const read of reads) {
      const answer = (await client.send(read as GetItemCommand)) as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] };
      const model = priced();
      seen.push(model);
      const dynamodb = reported(answer.ConsumedCapacity);
      expect(model.table, read.constructor.name).toBe(dynamodb.table + dynamodb.indexes);
    }
    // 5 KB: 2 × 4 KB, ½ each eventually consistent; the projected reads too.
    expect(seen.map((cost) => cost.table)).toEqual([1, 1, 2, 0.5, 1, 1, 2, 4]);
  });
});
