import { BatchGetCommand, GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { RunUsage, RunUsageFigures } from "#shared/domain/usage/schema";
import { documentClient, tableName } from "#shared/store/dynamo";
import { transactLabelled } from "#shared/store/transactions";
import { keys } from "#shared/store/keys";

/**
 * Metering items in the organization's usage partition (`ORG#o#USAGE`): the local gateway's call
 * counters (`CALLS#day`, attribute `calls`), one item per routing run (`RUN#day#runId`) and the
 * month's optimizer seconds and road-matrix elements (`RUNSECONDS#month`, attributes `seconds` and `travelElements`, read by the run quota and the travel cap).
 */

/**
 * Records a run's usage once: the run item is put only if absent and, in the same transaction, its
 * seconds are added to the month's total — so a redelivered run message can neither write a second
 * item nor add its seconds twice. False when the run was metered already.
 */
export async function recordRunUsage(usage: RunUsage, month: string): Promise<boolean> {
  const { organizationId } = usage;
  // A cancellation by a concurrent transaction on the month's total (another run finishing) is retried.
  for (let attempt = 0; attempt < 5; attempt++) {
    const failed = await transactLabelled([
      [
        {
          Put: {
            TableName: tableName(),
            Item: { ...keys.runUsage(organizationId, usage.day, usage.runId), ...usage, entity: "runUsage" },
            ConditionExpression: "attribute_not_exists(PK)",
          },
        },
        "metered already",
      ],
      [
        {
          Update: {
            TableName: tableName(),
            Key: keys.runSecondsTotal(organizationId, month),
            // The month's travelElements are charged when the matrix is asked (reserved, then settled: shared/app/travel.ts).
            UpdateExpression: "ADD #seconds :seconds SET entity = :entity",
            ExpressionAttributeNames: { "#seconds": "seconds" },
            ExpressionAttributeValues: { ":seconds": usage.optimizerSeconds, ":entity": "runSeconds" },
          },
        },
        "total",
      ],
    ] as const);
    if (failed === undefined) return true;
    if (failed.length > 0) return false;
  }
  throw new Error(`the usage of run ${usage.runId} could not be recorded: the month's total kept changing`);
}

/** Optimizer seconds metered for the organization in a UTC month (`YYYY-MM`). */
export async function runSecondsUsed(organizationId: string, month: string): Promise<number> {
  const output = await documentClient().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.runSecondsTotal(organizationId, month),
      ProjectionExpression: "#seconds",
      ExpressionAttributeNames: { "#seconds": "seconds" },
    }),
  );
  return Number(output.Item?.seconds ?? 0);
}

/** Road-matrix elements metered for the organization in a UTC month (`YYYY-MM`; the month's run total item). */
export async function travelElementsUsed(organizationId: string, month: string): Promise<number> {
  const output = await documentClient().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.runSecondsTotal(organizationId, month),
      ProjectionExpression: "#elements",
      ExpressionAttributeNames: { "#elements": "travelElements" },
    }),
  );
  return Number(output.Item?.travelElements ?? 0);
}

/** The plan name of the organization's tenant record, or undefined when it is not enrolled. */
export async function tenantPlanName(organizationId: string): Promise<string | undefined> {
  const output = await documentClient().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.tenant(organizationId),
      ProjectionExpression: "#plan",
      ExpressionAttributeNames: { "#plan": "plan" },
    }),
  );
  const plan = output.Item?.plan;
  return typeof plan === "string" ? plan : undefined;
}

/**
 * The plan names of several organizations' tenant records (absent: not enrolled), 100 per
 * BatchGetItem (unprocessed keys asked again): what the scheduler tick reads once per page.
 */
export async function tenantPlanNames(organizationIds: readonly string[]): Promise<Map<string, string | undefined>> {
  const plans = new Map<string, string | undefined>(organizationIds.map((organizationId) => [organizationId, undefined]));
  const ids = [...plans.keys()];
  for (let i = 0; i < ids.length; i += 100) {
    let requested: Array<Record<string, unknown>> | undefined = ids
      .slice(i, i + 100)
      .map((organizationId) => keys.tenant(organizationId) as unknown as Record<string, unknown>);
    for (let round = 0; requested && requested.length > 0; round++) {
      if (round === 10) throw new Error("DynamoDB left tenant records unread after 10 rounds");
      const output = await documentClient().send(
        new BatchGetCommand({
          RequestItems: {
            [tableName()]: {
              Keys: requested,
              ProjectionExpression: "organizationId, #plan",
              ExpressionAttributeNames: { "#plan": "plan" },
            },
          },
        }),
      );
      for (const item of output.Responses?.[tableName()] ?? []) {
        if (typeof item.organizationId === "string" && typeof item.plan === "string") plans.set(item.organizationId, item.plan);
      }
      requested = output.UnprocessedKeys?.[tableName()]?.Keys as Array<Record<string, unknown>> | undefined;
    }
  }
  return plans;
}

/** Reads every page of one bounded range of the usage partition; refuses past `maxItems`. */
async function queryRange(
  organizationId: string,
  low: string,
  high: string,
  projection: string[],
  maxItems: number,
): Promise<Record<string, unknown>[] | undefined> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const output = await documentClient().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: "PK = :pk AND SK BETWEEN :low AND :high",
        ExpressionAttributeValues: { ":pk": keys.usagePartition(organizationId), ":low": low, ":high": high },
        ProjectionExpression: projection.map((_, i) => `#p${i}`).join(", "),
        ExpressionAttributeNames: Object.fromEntries(projection.map((name, i) => [`#p${i}`, name])),
        ExclusiveStartKey: startKey,
        Limit: 1000,
      }),
    );
    items.push(...(output.Items ?? []));
    if (items.length > maxItems) return undefined;
    startKey = output.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** The local gateway's call counts per day of the range (days without calls are absent). */
export async function callCountsBetween(organizationId: string, from: string, to: string): Promise<Map<string, number>> {
  const low = keys.callCounter(organizationId, from).SK;
  const high = keys.callCounter(organizationId, to).SK;
  // One counter item per day: the range (≤ 366 days) bounds the read.
  const items = (await queryRange(organizationId, low, high, ["SK", "calls"], 1000)) ?? [];
  return new Map(items.map((item) => [String(item.SK).slice(low.length - from.length), Number(item.calls ?? 0)]));
}

/** Webhook delivery attempts per day of the range (days without attempts are absent). */
export async function webhookAttemptsBetween(organizationId: string, from: string, to: string): Promise<Map<string, number>> {
  const low = keys.webhookAttemptUsage(organizationId, from).SK;
  const high = keys.webhookAttemptUsage(organizationId, to).SK;
  // One counter item per day: the range (≤ 366 days) bounds the read.
  const items = (await queryRange(organizationId, low, high, ["SK", "attempts"], 1000)) ?? [];
  return new Map(items.map((item) => [String(item.SK).slice(low.length - from.length), Number(item.attempts ?? 0)]));
}

/** The day and seconds of every run metered in the range; undefined when more than `maxRuns`. */
export async function runUsageBetween(
  organizationId: string,
  from: string,
  to: string,
  maxRuns: number,
): Promise<RunUsageFigures[] | undefined> {
  // RUN#<day>#<run id>: from the first run of `from` to the last of `to` (ids are hex, below "~").
  const low = keys.runUsage(organizationId, from, "").SK;
  const high = keys.runUsage(organizationId, to, "~").SK;
  const items = await queryRange(organizationId, low, high, ["day", "optimizerSeconds", "travelElements"], maxRuns);
  return items?.map((item) => ({
    day: String(item.day),
    optimizerSeconds: Number(item.optimizerSeconds ?? 0),
    travelElements: Number(item.travelElements ?? 0),
  }));
}

/** Every run usage item of the range, in full (the operator's CLI; pages until done). */
export async function runUsageItemsBetween(organizationId: string, from: string, to: string): Promise<RunUsage[]> {
  const fields: (keyof RunUsage)[] = [
    "organizationId",
    "runId",
    "kind",
    "scheduleId",
    "hubId",
    "configurationId",
    "day",
    "outcome",
    "optimizerSeconds",
    "memoryMb",
    "visits",
    "vehicles",
    "travelElements",
    "time",
  ];
  const items = await queryRange(
    organizationId,
    keys.runUsage(organizationId, from, "").SK,
    keys.runUsage(organizationId, to, "~").SK,
    fields,
    Number.MAX_SAFE_INTEGER,
  );
  return (items ?? []) as unknown as RunUsage[];
}

/** Imports from the earlier version charged in the range, and the records they were charged (the operator's CLI; pages until done). */
export async function importUsageBetween(organizationId: string, from: string, to: string): Promise<{ imports: number; records: number }> {
  // IMPORT#<day>#<data type id>: from the first import of `from` to the last of `to`.
  const items =
    (await queryRange(
      organizationId,
      keys.importUsage(organizationId, from, "").SK,
      keys.importUsage(organizationId, to, "~").SK,
      ["records"],
      Number.MAX_SAFE_INTEGER,
    )) ?? [];
  return { imports: items.length, records: items.reduce((sum, item) => sum + Number(item.records ?? 0), 0) };
}
