import { createHash } from "node:crypto";
import { type AttributeValue, DescribeTableCommand, DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type _Record,
} from "@aws-sdk/client-dynamodb-streams";
import { ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import { GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { keys } from "#shared/store/keys";

/**
 * The fuzzer's oracle for "a refused request stored nothing": everything the product can write,
 * read directly (this is the test's own view, never a request path). The table the fuzzer uses
 * holds only the fuzz and bystander organizations: one Scan at the start sees every item, and from
 * then on the table's stream (every table has one: shared/store/table-definition.ts) says what each
 * request wrote, anywhere in the table, even in a partition no fixture points at. The stream's
 * records are applied to the scanned copy, so a snapshot is the table as a Scan would read it, at a
 * cost that does not grow with the table (a Scan per request made a run O(n²)); `verify` compares
 * that copy with a fresh Scan. S3 is listed under both organizations' prefixes; the run queue's
 * depth catches a queued run.
 */
export interface StoreSnapshot {
  /** `PK SK` → hash of the whole item. */
  items: Map<string, string>;
  /** S3 key → ETag and size. */
  objects: Map<string, string>;
  queueDepth: number;
}

export interface StoreOracleOptions {
  tableName: string;
  bucketName: string;
  queueUrl: string;
  organizationIds: string[];
  dynamo?: DynamoDBClient;
  /**
   * Where the table's stream is read: DynamoDB Local itself. The oracle is the test's view, so in
   * the strict project it reads around the semantics proxy (which models the table API, not the
   * stream's). Default: DYNAMODB_LOCAL_ENDPOINT, else AWS_ENDPOINT_URL_DYNAMODB.
   */
  streamEndpoint?: string;
  s3: S3Client;
  sqs: SQSClient;
}

/** Sorted keys and sorted sets, so equal items hash equally. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => {
          const member = (value as Record<string, unknown>)[key];
          return [key, ["SS", "NS", "BS"].includes(key) && Array.isArray(member) ? [...member].map(String).sort() : canonical(member)];
        }),
    );
  }
  return value;
}

/**
 * `version` is optimistic-concurrency bookkeeping, not data: a refused data type delete fences the
 * type and lifts the fence again (two version bumps, docs/api/data-types.md), which changes nothing a
 * client can read.
 */
const BOOKKEEPING_ATTRIBUTES = ["version"];

const itemKey = (item: Record<string, AttributeValue>) => `${item.PK?.S ?? "?"} ${item.SK?.S ?? "?"}`;

/** The hash an item is compared by: its canonical JSON without the bookkeeping attributes. */
function itemText(item: Record<string, AttributeValue>): string {
  const data = Object.fromEntries(Object.entries(item).filter(([name]) => !BOOKKEEPING_ATTRIBUTES.includes(name)));
  return JSON.stringify(canonical(data));
}

/**
 * A stream record's image as a Scan gives it: the streams client reads an empty map (`{"M":{}}`)
 * as an attribute value with no member at all (`{}`), where the table client keeps `M`.
 */
function asScanned(value: AttributeValue): AttributeValue {
  const member = value as unknown as Record<string, unknown>;
  if (Object.keys(member).length === 0) return { M: {} };
  if (value.M) return { M: Object.fromEntries(Object.entries(value.M).map(([name, entry]) => [name, asScanned(entry)])) };
  if (value.L) return { L: value.L.map(asScanned) };
  return value;
}
const hashOf = (text: string) => createHash("sha1").update(text).digest("hex");

/**
 * Metering, not data: the local gateway's usage plans count every admitted call, refused ones
 * included (as API Gateway's usage plans do), in the day's call counter of the organization
 * (keys.callCounter). A 4xx that only moved a counter stored nothing a client wrote.
 */
const CALL_COUNTER_PREFIX = keys.callCounter("-", "").SK;
export function isMeteringItem(partitionKey: string | undefined, sortKey: string | undefined): boolean {
  return partitionKey?.endsWith("#USAGE") === true && sortKey?.startsWith(CALL_COUNTER_PREFIX) === true;
}

/**
 * A reader of one table's stream from a position on: every shard the stream has when `open` runs is
 * read from its newest record on (LATEST), shards found later (a closed shard's children) from
 * their first (TRIM_HORIZON); a closed shard is read to its end before the shards that follow it.
 */
class TableStream {
  private readonly iterators = new Map<string, string>();
  private readonly known = new Set<string>();
  private streamArn = "";

  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly streams: DynamoDBStreamsClient,
    private readonly tableName: string,
  ) {}

  async open(): Promise<void> {
    const table = await this.dynamo.send(new DescribeTableCommand({ TableName: this.tableName }));
    const streamArn = table.Table?.LatestStreamArn;
    if (!streamArn || table.Table?.StreamSpecification?.StreamEnabled !== true)
      throw new Error(`store oracle: table ${this.tableName} has no stream (local/provision.ts enables one on every table)`);
    this.streamArn = streamArn;
    await this.discover("LATEST");
  }

  private async discover(position: "LATEST" | "TRIM_HORIZON"): Promise<void> {
    let exclusiveStartShardId: string | undefined;
    do {
      const described = await this.streams.send(
        new DescribeStreamCommand({ StreamArn: this.streamArn, ExclusiveStartShardId: exclusiveStartShardId }),
      );
      for (const shard of described.StreamDescription?.Shards ?? []) {
        const shardId = shard.ShardId as string;
        if (this.known.has(shardId)) continue;
        this.known.add(shardId);
        // A shard closed before the reader opened holds nothing written since.
        if (position === "LATEST" && shard.SequenceNumberRange?.EndingSequenceNumber) continue;
        const iterator = await this.streams.send(
          new GetShardIteratorCommand({ StreamArn: this.streamArn, ShardId: shardId, ShardIteratorType: position }),
        );
        if (iterator.ShardIterator) this.iterators.set(shardId, iterator.ShardIterator);
      }
      exclusiveStartShardId = described.StreamDescription?.LastEvaluatedShardId;
    } while (exclusiveStartShardId);
  }

  /** Every record written since the last call, in order per item. */
  async read(): Promise<_Record[]> {
    const records: _Record[] = [];
    for (;;) {
      let closedAny = false;
      for (const [shardId, start] of [...this.iterators]) {
        let iterator: string | undefined = start;
        while (iterator) {
          const output: GetRecordsCommandOutput = await this.streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
          records.push(...(output.Records ?? []));
          iterator = output.NextShardIterator;
          if (!iterator) {
            this.iterators.delete(shardId);
            closedAny = true;
          } else {
            this.iterators.set(shardId, iterator);
            if ((output.Records ?? []).length === 0) break;
          }
        }
      }
      if (!closedAny) break;
      // A shard ended: its children hold what follows, from their first record.
      await this.discover("TRIM_HORIZON");
    }
    // The shards list goes stale only when one closes (above) or a new one opens beside the open
    // ones, which DynamoDB does when it closes one; a cheap look keeps a stream that split honest.
    await this.discover("TRIM_HORIZON");
    return records;
  }
}

export class StoreOracle {
  private readonly dynamo: DynamoDBClient;
  private readonly streams: DynamoDBStreamsClient;
  private stream: TableStream | undefined;
  /** The last image the stream gave of each key, to show what a drift is. */
  private readonly lastImages = new Map<string, string>();

  constructor(private readonly options: StoreOracleOptions) {
    this.dynamo = options.dynamo ?? new DynamoDBClient({});
    const endpoint = options.streamEndpoint ?? process.env.DYNAMODB_LOCAL_ENDPOINT ?? process.env.AWS_ENDPOINT_URL_DYNAMODB;
    this.streams = new DynamoDBStreamsClient(endpoint ? { endpoint } : {});
  }

  /**
   * Re-reads only the stores a route may write (its `grants`): IAM gives a route without
   * `tableWrite` no way to write the table in AWS, so its answers need no look at the table (what
   * such a request wrote anyway shows at the next look, as it did with a Scan per look).
   */
  async refresh(previous: StoreSnapshot, grants: ReadonlyArray<string>): Promise<StoreSnapshot> {
    const [items, objects, queueDepth] = await Promise.all([
      grants.includes("tableWrite") ? this.items(previous.items) : previous.items,
      grants.includes("bucketWrite") ? this.objects() : previous.objects,
      grants.includes("queueSend") ? this.queueDepth() : previous.queueDepth,
    ]);
    return { items, objects, queueDepth };
  }

  /** Everything, as the stores hold it now: a Scan the first time, the stream after. */
  async snapshot(previous?: StoreSnapshot): Promise<StoreSnapshot> {
    const [items, objects, queueDepth] = await Promise.all([this.items(previous?.items), this.objects(), this.queueDepth()]);
    return { items, objects, queueDepth };
  }

  /**
   * What the stream-kept copy of the table got wrong: the keys whose item differs from a fresh
   * Scan's (empty when the copy is the table). A run ends with it, so a record the stream did not
   * deliver cannot hide a write.
   */
  async verify(snapshot: StoreSnapshot): Promise<string[]> {
    const texts = new Map<string, string>();
    const scanned = await this.scan(texts);
    const differences: string[] = [];
    const describe = (key: string) =>
      `${key}: ${snapshot.items.has(key) ? `kept ${this.lastImages.get(key) ?? "(scanned)"}` : "not kept"}; table ${texts.get(key) ?? "(none)"}`;
    for (const [key, hash] of scanned) if (snapshot.items.get(key) !== hash) differences.push(describe(key));
    for (const key of snapshot.items.keys()) if (!scanned.has(key)) differences.push(describe(key));
    return differences;
  }

  destroy(): void {
    this.streams.destroy();
  }

  private async items(previous: Map<string, string> | undefined): Promise<Map<string, string>> {
    if (!this.stream || !previous) {
      // The reader opens before the Scan: a write between the two is both scanned and read, and
      // applying it again changes nothing.
      const stream = new TableStream(this.dynamo, this.streams, this.options.tableName);
      await stream.open();
      this.stream = stream;
      return this.scan();
    }
    const records = await this.stream.read();
    if (records.length === 0) return previous;
    const items = new Map(previous);
    for (const record of records) {
      const streamed = record.dynamodb?.NewImage as Record<string, AttributeValue> | undefined;
      const image = streamed && Object.fromEntries(Object.entries(streamed).map(([name, value]) => [name, asScanned(value)]));
      const keyOf = (record.dynamodb?.Keys ?? {}) as Record<string, AttributeValue>;
      if (isMeteringItem(keyOf.PK?.S, keyOf.SK?.S)) continue;
      if (record.eventName === "REMOVE" || !image) items.delete(itemKey(keyOf));
      else {
        const text = itemText(image);
        items.set(itemKey(image), hashOf(text));
        this.lastImages.set(itemKey(image), text);
      }
    }
    return items;
  }

  private async scan(texts?: Map<string, string>): Promise<Map<string, string>> {
    const items = new Map<string, string>();
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.dynamo.send(
        new ScanCommand({ TableName: this.options.tableName, ConsistentRead: true, ExclusiveStartKey: startKey }),
      );
      for (const item of page.Items ?? []) {
        if (isMeteringItem(item.PK?.S, item.SK?.S)) continue;
        const text = itemText(item);
        items.set(itemKey(item), hashOf(text));
        texts?.set(itemKey(item), text);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return items;
  }

  private async objects(): Promise<Map<string, string>> {
    const objects = new Map<string, string>();
    for (const organizationId of this.options.organizationIds) {
      let token: string | undefined;
      do {
        const page = await this.options.s3.send(
          new ListObjectsV2Command({
            Bucket: this.options.bucketName,
            Prefix: `org/${encodeURIComponent(organizationId)}/`,
            ContinuationToken: token,
          }),
        );
        for (const object of page.Contents ?? []) objects.set(object.Key as string, `${object.ETag} ${object.Size}`);
        token = page.NextContinuationToken;
      } while (token);
    }
    return objects;
  }

  private async queueDepth(): Promise<number> {
    const attributes = await this.options.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.options.queueUrl,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      }),
    );
    return (
      Number(attributes.Attributes?.ApproximateNumberOfMessages ?? 0) +
      Number(attributes.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
    );
  }
}

export interface StoreChange {
  /** The organization whose data changed (`?` when the key names none of the known ones). */
  organizationId: string;
  description: string;
}

/** What differs between two snapshots, attributed to organizations by key prefix. */
export function storeChanges(before: StoreSnapshot, after: StoreSnapshot, organizationIds: readonly string[]): StoreChange[] {
  const ownerOf = (text: string) =>
    organizationIds.find((organizationId) => {
      const partition = keys.organizationPartition(organizationId);
      return (
        text.startsWith(`${partition} `) ||
        text.startsWith(`${partition}#`) ||
        text.startsWith(`org/${encodeURIComponent(organizationId)}/`)
      );
    }) ?? "?";
  const changes: StoreChange[] = [];
  const compare = (kind: string, was: Map<string, string>, now: Map<string, string>) => {
    for (const [key, hash] of now) {
      if (!was.has(key)) changes.push({ organizationId: ownerOf(key), description: `${kind} added: ${key}` });
      else if (was.get(key) !== hash) changes.push({ organizationId: ownerOf(key), description: `${kind} changed: ${key}` });
    }
    for (const key of was.keys()) if (!now.has(key)) changes.push({ organizationId: ownerOf(key), description: `${kind} removed: ${key}` });
  };
  compare("item", before.items, after.items);
  compare("object", before.objects, after.objects);
  if (after.queueDepth > before.queueDepth)
    changes.push({ organizationId: "?", description: `run queue grew by ${after.queueDepth - before.queueDepth}` });
  return changes;
}
