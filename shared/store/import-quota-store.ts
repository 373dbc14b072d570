import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { type ImportLimits, IMPORT_LEASE_SECONDS } from "#shared/domain/usage/import-quota";
import { conditionally, documentClient, tableName } from "#shared/store/dynamo";
import { transactLabelled } from "#shared/store/transactions";
import { keys } from "#shared/store/keys";

/**
 * The plan limits of imports from the earlier version (shared/domain/usage/import-quota.ts):
 * - `ORG#o` / `ACTIVEIMPORTS`: attribute `imports`, a map of lease ends (epoch ms) by imported data
 *   type id: the imports queued or running;
 * - `ORG#o#USAGE` / `IMPORT#<day>#<data type id>`: what one import is charged (`records`,
 *   `outcome` `charged` while it runs, then `done` / `failed`);
 * - `ORG#o#USAGE` / `IMPORTRECORDS#<month>`: attribute `records`, the month's total.
 */

/** Ended leases one take removes at most (the rest go with a later take). */
const MAX_REMOVED_PER_TAKE = 20;

export type ImportTake = { taken: true } | { taken: false; reason: "cap" } | { taken: false; reason: "quota"; usedRecords: number };

async function readLeases(organizationId: string): Promise<Record<string, number> | undefined> {
  const output = await documentClient().send(
    new GetCommand({ TableName: tableName(), Key: keys.activeImports(organizationId), ConsistentRead: true }),
  );
  return output.Item?.imports as Record<string, number> | undefined;
}

/** Records imports were charged in the month. */
export async function importRecordsUsed(organizationId: string, month: string): Promise<number> {
  const output = await documentClient().send(
    new GetCommand({ TableName: tableName(), Key: keys.importRecordsTotal(organizationId, month), ConsistentRead: true }),
  );
  return Number(output.Item?.records ?? 0);
}

/**
 * Takes a slot for the import of `dataTypeId` and charges its `records` to the month, in one
 * transaction: the lease map's write is conditional on the map being as read (its size and the
 * ended leases it removes), the month's total on leaving room for the records, and the usage item on
 * being new. So concurrent imports of one tenant can pass neither the cap nor the quota together.
 */
export async function takeImport(
  organizationId: string,
  dataTypeId: string,
  records: number,
  limits: ImportLimits,
  now: Date,
  day: string,
  month: string,
): Promise<ImportTake> {
  const leaseKey = keys.activeImports(organizationId);
  for (let attempt = 0; attempt < 8; attempt++) {
    const leases = await readLeases(organizationId);
    if (!leases) {
      // First import of the organization: create the empty map (if a concurrent taker has not), then take.
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: leaseKey,
          UpdateExpression: "SET imports = if_not_exists(imports, :empty), entity = :entity",
          ExpressionAttributeValues: { ":empty": {}, ":entity": "activeImports" },
        }),
      );
      continue;
    }
    const ended = Object.entries(leases)
      .filter(([, until]) => until <= now.getTime())
      .slice(0, MAX_REMOVED_PER_TAKE);
    if (Object.keys(leases).length - ended.length >= limits.maxRunning) return { taken: false, reason: "cap" };
    const names: Record<string, string> = { "#id": dataTypeId };
    const values: Record<string, unknown> = { ":until": now.getTime() + IMPORT_LEASE_SECONDS * 1000, ":size": Object.keys(leases).length };
    ended.forEach(([id, until], i) => {
      names[`#e${i}`] = id;
      values[`:e${i}`] = until;
    });
    const total: Record<string, unknown> = { ":records": records, ":entity": "importRecords" };
    let totalCondition: string | undefined;
    if (limits.recordsPerMonth !== undefined) {
      total[":room"] = limits.recordsPerMonth - records;
      totalCondition = "attribute_not_exists(#records) OR #records <= :room";
    }
    const failed = await transactLabelled([
      [
        {
          Update: {
            TableName: tableName(),
            Key: leaseKey,
            UpdateExpression: `SET imports.#id = :until${ended.length > 0 ? ` REMOVE ${ended.map((_, i) => `imports.#e${i}`).join(", ")}` : ""}`,
            ConditionExpression: ["size(imports) = :size", ...ended.map((_, i) => `imports.#e${i} = :e${i}`)].join(" AND "),
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          },
        },
        "leases",
      ],
      [
        {
          Update: {
            TableName: tableName(),
            Key: keys.importRecordsTotal(organizationId, month),
            UpdateExpression: "ADD #records :records SET entity = :entity",
            ...(totalCondition ? { ConditionExpression: totalCondition } : {}),
            ExpressionAttributeNames: { "#records": "records" },
            ExpressionAttributeValues: total,
          },
        },
        "quota",
      ],
      [
        {
          Put: {
            TableName: tableName(),
            Item: {
              ...keys.importUsage(organizationId, day, dataTypeId),
              entity: "importUsage",
              organizationId,
              dataTypeId,
              day,
              records,
              outcome: "charged",
            },
            ConditionExpression: "attribute_not_exists(PK)",
          },
        },
        "usage",
      ],
    ] as const);
    if (failed === undefined) return { taken: true };
    if (failed.includes("usage")) throw new Error(`the import of data type ${dataTypeId} was charged already`);
    if (failed.includes("quota")) return { taken: false, reason: "quota", usedRecords: await importRecordsUsed(organizationId, month) };
    // The lease map changed (another take or release) or a concurrent transaction won: read again.
  }
  throw new Error("the import slot could not be taken: the organization's imports kept changing");
}

/** Moves the import's lease end on (each step does; nothing when the lease is gone). */
export async function renewImport(organizationId: string, dataTypeId: string, now: Date): Promise<void> {
  await conditionally(
    documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.activeImports(organizationId),
        UpdateExpression: "SET imports.#id = :until",
        ConditionExpression: "attribute_exists(imports.#id)",
        ExpressionAttributeNames: { "#id": dataTypeId },
        ExpressionAttributeValues: { ":until": now.getTime() + IMPORT_LEASE_SECONDS * 1000 },
      }),
    ),
  );
}

/**
 * Ends an import: its usage item is settled at the records it wrote (`written`) and the month's total
 * gets back the rest of what it was charged, in one transaction conditional on the item still being
 * `charged` (so a second end gives back nothing); then its slot is freed.
 */
export async function endImport(
  organizationId: string,
  dataTypeId: string,
  day: string,
  month: string,
  written: number,
  outcome: "done" | "failed",
): Promise<void> {
  const usageKey = keys.importUsage(organizationId, day, dataTypeId);
  const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: usageKey, ConsistentRead: true }));
  const charged = output.Item?.outcome === "charged" ? Number(output.Item.records ?? 0) : undefined;
  if (charged !== undefined) {
    for (let attempt = 0; attempt < 5; attempt++) {
      const failed = await transactLabelled([
        [
          {
            Update: {
              TableName: tableName(),
              Key: usageKey,
              UpdateExpression: "SET #records = :written, outcome = :outcome, chargedRecords = :charged",
              ConditionExpression: "outcome = :charging",
              ExpressionAttributeNames: { "#records": "records" },
              ExpressionAttributeValues: { ":written": written, ":outcome": outcome, ":charged": charged, ":charging": "charged" },
            },
          },
          "settled already",
        ],
        [
          {
            Update: {
              TableName: tableName(),
              Key: keys.importRecordsTotal(organizationId, month),
              UpdateExpression: "ADD #records :refund",
              ExpressionAttributeNames: { "#records": "records" },
              ExpressionAttributeValues: { ":refund": Math.min(0, written - charged) },
            },
          },
          "total",
        ],
      ] as const);
      if (failed === undefined || failed.length > 0) break;
    }
  }
  await documentClient()
    .send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.activeImports(organizationId),
        UpdateExpression: "REMOVE imports.#id",
        ConditionExpression: "attribute_exists(imports)",
        ExpressionAttributeNames: { "#id": dataTypeId },
      }),
    )
    .catch((error: unknown) => {
      if (!(error instanceof Error && error.name === "ConditionalCheckFailedException")) throw error;
    });
}
