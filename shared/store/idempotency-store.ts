import { gunzipSync, gzipSync } from "node:zlib";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBPersistenceLayer } from "@aws-lambda-powertools/idempotency/dynamodb";
import { tableDefinition } from "#shared/store/table-definition";
import { tableName } from "#shared/store/dynamo";
import { keys } from "#shared/store/keys";

/**
 * Idempotency records live in the product's table, in the caller's organization partition
 * `ORG#<org>#IDEM` (keys.idempotencyPartition), SK `<operationId>#<digest of the Idempotency-Key>`
 * written by Powertools' DynamoDB persistence layer; `expiresAt` is the table's TTL attribute, so
 * records vanish by themselves after their 24 hours. The same table runs on DynamoDB Local, and no
 * second table needs its own IAM, alarms and backups. One persistence layer per organization
 * (cheap objects over one module-scope client): its partition key is fixed at construction.
 */
let client: DynamoDBClient | undefined;

export function idempotencyPersistence(organizationId: string): DynamoDBPersistenceLayer {
  client ??= new DynamoDBClient({});
  return new DynamoDBPersistenceLayer({
    tableName: tableName(),
    keyAttr: tableDefinition.partitionKey,
    sortKeyAttr: tableDefinition.sortKey,
    staticPkValue: keys.idempotencyPartition(organizationId),
    expiryAttr: tableDefinition.timeToLiveAttribute,
    awsSdkV3Client: client,
  });
}

/** The answer kept for replays: status, the route's own headers, and the JSON body (gzipped when large). */
export interface StoredAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body?: string;
  /** Gzipped body, for bodies above GZIP_ABOVE_BYTES (a DynamoDB item holds at most 400 KB). */
  gzippedBody?: Uint8Array;
}

export const GZIP_ABOVE_BYTES = 16 * 1024;

export function packAnswer(answer: {
  statusCode: number;
  headers?: Record<string, string | number | boolean> | undefined;
  body: string;
}): StoredAnswer {
  const headers = Object.fromEntries(Object.entries(answer.headers ?? {}).map(([name, value]) => [name, String(value)]));
  if (Buffer.byteLength(answer.body) <= GZIP_ABOVE_BYTES) return { statusCode: answer.statusCode, headers, body: answer.body };
  return { statusCode: answer.statusCode, headers, gzippedBody: new Uint8Array(gzipSync(answer.body)) };
}

export function unpackAnswer(stored: StoredAnswer): { statusCode: number; headers: Record<string, string>; body: string } {
  const body = stored.gzippedBody !== undefined ? gunzipSync(stored.gzippedBody).toString("utf8") : (stored.body ?? "");
  return { statusCode: Number(stored.statusCode), headers: { ...stored.headers }, body };
}
