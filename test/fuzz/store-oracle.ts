import { createHash } from "node:crypto";
import { type AttributeValue, DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import { ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import { GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { keys } from "#shared/store/keys";

/**
 * The fuzzer's oracle for "a refused request stored nothing": everything the product can write,
 * read directly (this is the test's own view, never a request path). The table the fuzzer uses
 * holds only the fuzz and bystander organizations, so a Scan of it is small and catches a write
 * anywhere, even in a partition no fixture points at; S3 is listed under both organizations'
 * prefixes; the run queue's depth catches a queued run.
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

/**
 * Metering, not data: the local gateway's usage plans count every admitted call, refused ones
 * included (as API Gateway's usage plans do), in the day's call counter of the organization
 * (keys.callCounter). A 4xx that only moved a counter stored nothing a client wrote.
 */
const CALL_COUNTER_PREFIX = keys.callCounter("-", "").SK;
export function isMeteringItem(partitionKey: string | undefined, sortKey: string | undefined): boolean {
  return partitionKey?.endsWith("#USAGE") === true && sortKey?.startsWith(CALL_COUNTER_PREFIX) === true;
}

export class StoreOracle {
  private readonly dynamo: DynamoDBClient;

  constructor(private readonly options: StoreOracleOptions) {
    this.dynamo = options.dynamo ?? new DynamoDBClient({});
  }

  /**
   * Re-reads only the stores a route may write (its `grants`): IAM gives a route without
   * `tableWrite` no way to write the table in AWS, so its answers need no table scan.
   */
  async refresh(previous: StoreSnapshot, grants: ReadonlyArray<string>): Promise<StoreSnapshot> {
    const [items, objects, queueDepth] = await Promise.all([
      grants.includes("tableWrite") ? this.items() : previous.items,
      grants.includes("bucketWrite") ? this.objects() : previous.objects,
      grants.includes("queueSend") ? this.queueDepth() : previous.queueDepth,
    ]);
    return { items, objects, queueDepth };
  }

  async snapshot(): Promise<StoreSnapshot> {
    const [items, objects, queueDepth] = await Promise.all([this.items(), this.objects(), this.queueDepth()]);
    return { items, objects, queueDepth };
  }

  private async items(): Promise<Map<string, string>> {
    const items = new Map<string, string>();
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.dynamo.send(
        new ScanCommand({ TableName: this.options.tableName, ConsistentRead: true, ExclusiveStartKey: startKey }),
      );
      for (const item of page.Items ?? []) {
        if (isMeteringItem(item.PK?.S, item.SK?.S)) continue;
        const data = Object.fromEntries(Object.entries(item).filter(([name]) => !BOOKKEEPING_ATTRIBUTES.includes(name)));
        items.set(
          itemKey(item),
          createHash("sha1")
            .update(JSON.stringify(canonical(data)))
            .digest("hex"),
        );
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
