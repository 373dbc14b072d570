/**
 * The single table's shape as plain data. The CDK stack (infra/) and the local runtime (local/)
 * both build the table from this one definition, so they cannot drift apart.
 */
export const tableDefinition = {
  partitionKey: "PK",
  sortKey: "SK",
  /** Generic secondary indexes; what each entity stores in them is documented in keys.ts. */
  globalSecondaryIndexes: [
    { indexName: "GSI1", partitionKey: "GSI1PK", sortKey: "GSI1SK" },
    { indexName: "GSI2", partitionKey: "GSI2PK", sortKey: "GSI2SK" },
  ],
  /** Epoch seconds; items carrying it (run claims, idempotency markers) expire by themselves. */
  timeToLiveAttribute: "expiresAt",
  /** The stream the webhook publisher reads: every committed write with its images before and after (domain events come from it). */
  streamViewType: "NEW_AND_OLD_IMAGES",
} as const;

export type IndexName = (typeof tableDefinition.globalSecondaryIndexes)[number]["indexName"];
