import { Duration, RemovalPolicy, type Stack, Validations } from "aws-cdk-lib";
import { AttributeType, Billing, StreamViewType, TableV2 } from "aws-cdk-lib/aws-dynamodb";
import { BlockPublicAccess, Bucket, BucketEncryption, type LifecycleRule, ObjectOwnership, StorageClass } from "aws-cdk-lib/aws-s3";
import { objectKinds } from "#shared/store/keys";
import { tableDefinition } from "#shared/store/table-definition";

/** Where the product's data lives: the single table, the file bucket and the bucket of its access logs. */
export interface ProductStorage {
  table: TableV2;
  accessLogBucket: Bucket;
  bucket: Bucket;
}

/**
 * The stateful core, created in the stack's own scope (their logical ids are pinned:
 * test/infra/stateful-logical-ids.test.ts). `travelCacheTtlDays` is the operator's travel
 * providers' cache TTL (context `travelProviders`), 30 days when unset.
 */
export function productStorage(stack: Stack, travelCacheTtlDays: number | undefined): ProductStorage {
  const table = new TableV2(stack, "Table", {
    partitionKey: { name: tableDefinition.partitionKey, type: AttributeType.STRING },
    sortKey: { name: tableDefinition.sortKey, type: AttributeType.STRING },
    globalSecondaryIndexes: tableDefinition.globalSecondaryIndexes.map((index) => ({
      indexName: index.indexName,
      partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
      sortKey: { name: index.sortKey, type: AttributeType.STRING },
    })),
    timeToLiveAttribute: tableDefinition.timeToLiveAttribute,
    // The webhook publisher reads domain events from the committed writes themselves.
    dynamoStream: StreamViewType[tableDefinition.streamViewType],
    billing: Billing.onDemand(),
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });

  const accessLogBucket = new Bucket(stack, "AccessLogBucket", {
    encryption: BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
    lifecycleRules: [{ expiration: Duration.days(365) }],
    removalPolicy: RemovalPolicy.RETAIN,
  });
  Validations.of(accessLogBucket).acknowledge({
    id: "AwsSolutions-S1",
    reason: "This bucket receives the file bucket's access logs; logging it again would recurse.",
  });

  const bucket = new Bucket(stack, "FileBucket", {
    encryption: BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    versioned: true,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    serverAccessLogsBucket: accessLogBucket,
    serverAccessLogsPrefix: "file-bucket/",
    // Travel matrix caches are rewritten by every run that adds points: keep no old versions, and drop
    // a cache no run has rewritten for its TTL (its entries would all be asked again anyway).
    lifecycleRules: [
      ...fileLifecycleRules(stack),
      {
        id: "ExpireTravelMatrixCaches",
        prefix: objectKinds.travelCache,
        noncurrentVersionExpiration: Duration.days(1),
        expiration: Duration.days(Math.ceil(travelCacheTtlDays ?? 30)),
      },
    ],
    removalPolicy: RemovalPolicy.RETAIN,
  });
  return { table, accessLogBucket, bucket };
}

/**
 * The file bucket's lifecycle, each period by context: uploaded exports expire `importRetentionDays`
 * (default 7) after upload, imported or not (an import reads its file within minutes); replaced and
 * deleted versions expire `noncurrentVersionDays` (default 30) after they stop being current;
 * unfinished multipart uploads are aborted after a day; result bodies expire only when
 * `resultRetentionDays` is set (a result's item outlives its body: reading it then answers without routes).
 * Proofs of delivery expire `proofRetentionDays` (default 400: a year of delivery disputes plus a
 * month's margin) after upload, and move to Standard-IA after 30 days (read in the first days, then
 * only in a dispute; S3 leaves objects under 128 KB, most signatures, in Standard).
 */
export function fileLifecycleRules(stack: Stack): LifecycleRule[] {
  const days = (key: string, fallback?: number) => {
    const value = stack.node.tryGetContext(key) ?? fallback;
    if (value === undefined) return undefined;
    const number = Number(value);
    if (!Number.isInteger(number) || number < 1) throw new Error(`${key} must be a whole number of days ≥ 1, got ${String(value)}`);
    return number;
  };
  const resultDays = days("resultRetentionDays");
  const proofDays = days("proofRetentionDays", PROOF_RETENTION_DAYS) as number;
  return [
    { id: "AbortIncompleteMultipartUploads", abortIncompleteMultipartUploadAfter: Duration.days(1) },
    {
      id: "ExpireNoncurrentVersions",
      noncurrentVersionExpiration: Duration.days(days("noncurrentVersionDays", 30) as number),
      expiredObjectDeleteMarker: true,
    },
    { id: "ExpireImportUploads", prefix: objectKinds.imports, expiration: Duration.days(days("importRetentionDays", 7) as number) },
    ...(resultDays ? [{ id: "ExpireResultBodies", prefix: objectKinds.results, expiration: Duration.days(resultDays) }] : []),
    {
      id: "ExpireProofsOfDelivery",
      prefix: objectKinds.proofs,
      // Standard-IA takes objects 30 days old at the earliest; a shorter retention just expires them.
      ...(proofDays > PROOF_IA_AFTER_DAYS
        ? { transitions: [{ storageClass: StorageClass.INFREQUENT_ACCESS, transitionAfter: Duration.days(PROOF_IA_AFTER_DAYS) }] }
        : {}),
      expiration: Duration.days(proofDays),
    },
  ];
}

/** Default days a proof of delivery is kept (context `proofRetentionDays`). */
export const PROOF_RETENTION_DAYS = 400;
const PROOF_IA_AFTER_DAYS = 30;
