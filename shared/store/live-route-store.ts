import { BatchGetCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { LivePlan, LiveProgress, LiveRoute } from "#shared/domain/runs/live-day";
import { type Visit, visitSchema } from "#shared/domain/visits/schema";
import { conditionally, documentClient, isConditionalCheckFailed, tableName } from "#shared/store/dynamo";
import { keys, withoutStorageAttributes } from "#shared/store/keys";
import { queryUpTo } from "#shared/store/pagination";

/**
 * Live routes (shared/domain/runs/live-day.ts): one item per vehicle in the vehicle's own partition
 * (`ORG#o#VEH#v` / `LIVEROUTE`), listed per hub on GSI1 (`ORG#o#HUB#h#LIVE`), so a run finds a hub's
 * dispatched routes with one bounded query. Each dispatch replaces a vehicle's item, unless the item
 * already holds a newer result's route (ids grow with time): a retried older dispatch cannot undo a re-plan.
 */
const MAX_LIVE_ROUTES_PER_HUB = 2_000;

export async function liveRoutesOfHub(organizationId: string, hubId: string): Promise<LiveRoute[]> {
  const items = await queryUpTo({ index: "GSI1", partition: keys.liveRoutesOfHub(organizationId, hubId), max: MAX_LIVE_ROUTES_PER_HUB });
  return items.map(liveRouteOfItem);
}

function liveRouteOfItem(item: Record<string, unknown>): LiveRoute {
  return {
    vehicleId: String(item.vehicleId),
    hubId: String(item.hubId),
    resultId: String(item.resultId),
    visitIds: (item.visitIds as string[] | undefined) ?? [],
    departure: String(item.departure),
    timeZone: String(item.timeZone),
    dispatchedTime: String(item.dispatchedTime),
    ...(item.plan ? { plan: item.plan as LivePlan } : {}),
    ...(item.progress ? { progress: item.progress as LiveProgress } : {}),
  };
}

/** The vehicle's live route (its last dispatched one), read strongly consistently. */
export async function findLiveRoute(organizationId: string, vehicleId: string): Promise<LiveRoute | undefined> {
  const output = await documentClient().send(
    new GetCommand({ TableName: tableName(), Key: keys.vehicleLiveRoute(organizationId, vehicleId), ConsistentRead: true }),
  );
  return output.Item ? liveRouteOfItem(output.Item) : undefined;
}

/**
 * Writes the route's progress state (observed times, announced ETAs and risks) in one conditional
 * update: only while the item still holds the route of `resultId` and the state the caller read
 * (`version`; none before the first action). False when another write came first (read again).
 * Its stream record is the outbox of `visit.eta.changed` / `visit.risk.changed` (state-changes.ts).
 */
export async function recordLiveProgress(
  organizationId: string,
  vehicleId: string,
  resultId: string,
  readVersion: number | undefined,
  progress: LiveProgress,
): Promise<boolean> {
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.vehicleLiveRoute(organizationId, vehicleId),
        UpdateExpression: "SET progress = :progress",
        ConditionExpression:
          readVersion === undefined
            ? "resultId = :result AND attribute_not_exists(progress)"
            : "resultId = :result AND progress.version = :version",
        ExpressionAttributeValues: {
          ":progress": progress,
          ":result": resultId,
          ...(readVersion === undefined ? {} : { ":version": readVersion }),
        },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}

export async function recordLiveRoutes(organizationId: string, routes: readonly LiveRoute[]): Promise<void> {
  for (const route of routes) {
    await conditionally(
      documentClient().send(
        new PutCommand({
          TableName: tableName(),
          Item: {
            ...keys.vehicleLiveRoute(organizationId, route.vehicleId),
            GSI1PK: keys.liveRoutesOfHub(organizationId, route.hubId),
            GSI1SK: `VEH#${route.vehicleId}`,
            entity: "liveRoute",
            organizationId,
            ...route,
          },
          ConditionExpression: "attribute_not_exists(PK) OR resultId <= :result",
          ExpressionAttributeValues: { ":result": route.resultId },
        }),
      ),
    );
  }
}

/** These visits of one hub (BatchGet, 100 keys a call); visits gone are left out. */
export async function visitsOfHubByIds(organizationId: string, hubId: string, visitIds: readonly string[]): Promise<Visit[]> {
  const visits: Visit[] = [];
  const unique = [...new Set(visitIds)];
  for (let i = 0; i < unique.length; i += 100) {
    let requested: Array<Record<string, unknown>> | undefined = unique
      .slice(i, i + 100)
      .map((id) => keys.visit(organizationId, hubId, id) as unknown as Record<string, unknown>);
    for (let round = 0; requested && requested.length > 0 && round < 10; round++) {
      const output = await documentClient().send(
        new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: requested, ConsistentRead: true } } }),
      );
      for (const item of output.Responses?.[tableName()] ?? []) visits.push(visitSchema.parse(withoutStorageAttributes(item)));
      requested = output.UnprocessedKeys?.[tableName()]?.Keys as Array<Record<string, unknown>> | undefined;
    }
  }
  return visits;
}
