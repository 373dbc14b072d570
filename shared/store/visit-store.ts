import { BatchGetCommand, GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { ValidationError } from "#shared/domain/errors";
import { type Visit, type VisitStatus, activeVisitStatuses, isActiveVisitStatus, visitSchema } from "#shared/domain/visits/schema";
import type { VisitListFilter, VisitStore } from "#shared/domain/visits/service";
import { documentClient, isConditionalCheckFailed, tableName, type TransactItem } from "#shared/store/dynamo";
import { deleteVersioned, putNew, versionConflict, writeWithHubReferences } from "#shared/store/hub-store";
import { concurrentUpdateError } from "#shared/store/items";
import { keys, withoutStorageAttributes } from "#shared/store/keys";
import { type PartitionRead, queryPage, queryPageAcross, queryUpTo } from "#shared/store/pagination";

/**
 * Visits live in their hub's partition (`ORG#o#HUB#h` / `VISIT#id`), so a run reads one hub's
 * visits without touching others. Three more things are kept in step, in the same transaction:
 * - the sparse active-visits index (GSI1 `ORG#o#HUB#h#ACTIVE` / `<id>`), present only while the
 *   status is UNASSIGNED or ONGOING; ids grow with creation time, so the index is oldest first;
 * - GSI2 `ORG#o#VISIT` / `VISIT#id`, the organization-wide list;
 * - a lookup item `ORG#o` / `VISITREF#id` → hubId, so a visit is read by id alone (strongly consistent);
 * - the hub's visit reference count.
 */
function visitItem(visit: Visit): Record<string, unknown> {
  return {
    ...visit,
    entity: "visit",
    ...(isActiveVisitStatus(visit.status) ? { GSI1PK: keys.activeVisits(visit.organizationId, visit.hubId), GSI1SK: visit._id } : {}),
    GSI2PK: keys.visitsOfOrganization(visit.organizationId),
    GSI2SK: `${keys.visitPrefix}${visit._id}`,
  };
}

function refItem(visit: Visit): Record<string, unknown> {
  return { entity: "visitRef", hubId: visit.hubId };
}

/** Claims the pickup for this delivery; fails its condition when another delivery holds it. */
function claimPickup(visit: Visit): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: { ...keys.pickupClaim(visit.organizationId, visit.pickupVisitId as string), entity: "pickupClaim", deliveryVisitId: visit._id },
      ConditionExpression: "attribute_not_exists(PK) OR deliveryVisitId = :delivery",
      ExpressionAttributeValues: { ":delivery": visit._id },
    },
  };
}

function releasePickup(organizationId: string, pickupId: string): TransactItem {
  return { Delete: { TableName: tableName(), Key: keys.pickupClaim(organizationId, pickupId) } };
}

/** A pickup claimed meanwhile by another delivery: the same 400 the service gives when it sees the claim. */
const pickupTaken = () => ValidationError.single("pickupVisitId", "that visit is already the pickup of another delivery");

function toVisit(item: Record<string, unknown>): Visit {
  return visitSchema.parse(withoutStorageAttributes(item));
}

function statusFilter(filter: VisitListFilter): PartitionRead["filter"] {
  return filter.status !== undefined ? { expression: "#status = :status", names: { "#status": "status" }, values: { ":status": filter.status } } : undefined;
}

/** One hub's visits: an active status is read from the sparse index (only active visits are touched), else the hub's partition. */
function hubRead(organizationId: string, hubId: string, filter: VisitListFilter): PartitionRead {
  if (filter.status !== undefined && isActiveVisitStatus(filter.status)) {
    return { index: "GSI1", partition: keys.activeVisits(organizationId, hubId), filter: statusFilter(filter) };
  }
  return { partition: keys.visit(organizationId, hubId, "").PK, sortKeyPrefix: keys.visitPrefix, filter: statusFilter(filter) };
}

export const dynamoVisitStore: VisitStore = {
  async insert(visit) {
    const outcome = await writeWithHubReferences(
      [
        putNew(keys.visit(visit.organizationId, visit.hubId, visit._id), visitItem(visit)),
        putNew(keys.visitRef(visit.organizationId, visit._id), refItem(visit)),
        ...(visit.pickupVisitId !== null ? [claimPickup(visit)] : []),
      ],
      { organizationId: visit.organizationId, kind: "visit", to: visit.hubId },
    );
    if (!outcome.ok && outcome.codes[2] === "ConditionalCheckFailed") throw pickupTaken();
    // Ids are fresh ObjectIds; a collision means something is badly wrong, not a client mistake.
    if (!outcome.ok) throw concurrentUpdateError();
  },

  async find(organizationId, visitId) {
    const client = documentClient();
    const ref = await client.send(new GetCommand({ TableName: tableName(), Key: keys.visitRef(organizationId, visitId), ConsistentRead: true }));
    if (typeof ref.Item?.hubId !== "string") return undefined;
    const output = await client.send(
      new GetCommand({ TableName: tableName(), Key: keys.visit(organizationId, ref.Item.hubId, visitId), ConsistentRead: true }),
    );
    if (!output.Item) return undefined;
    return { visit: toVisit(output.Item), version: Number(output.Item.version ?? 0) };
  },

  async replace(visit, previous) {
    const oldKey = keys.visit(visit.organizationId, previous.hubId, visit._id);
    const items: TransactItem[] = [];
    if (previous.hubId === visit.hubId) {
      items.push({
        Put: {
          TableName: tableName(),
          Item: { ...visitItem(visit), ...oldKey, version: previous.version + 1 },
          ConditionExpression: "version = :expected",
          ExpressionAttributeValues: { ":expected": previous.version },
        },
      });
    } else {
      // Another hub is another partition: delete here, create there, repoint the lookup item.
      items.push(deleteVersioned(oldKey, previous.version), {
        Put: {
          TableName: tableName(),
          Item: { ...visitItem(visit), ...keys.visit(visit.organizationId, visit.hubId, visit._id), version: previous.version + 1 },
          ConditionExpression: "attribute_not_exists(PK)",
        },
      });
      items.push({ Put: { TableName: tableName(), Item: { ...refItem(visit), ...keys.visitRef(visit.organizationId, visit._id) } } });
    }
    const entityCount = items.length;
    if (visit.pickupVisitId !== previous.pickupVisitId) {
      if (previous.pickupVisitId !== null) items.push(releasePickup(visit.organizationId, previous.pickupVisitId));
      if (visit.pickupVisitId !== null) items.push(claimPickup(visit));
    }
    const outcome = await writeWithHubReferences(items, { organizationId: visit.organizationId, kind: "visit", from: previous.hubId, to: visit.hubId });
    if (!outcome.ok && outcome.codes.slice(entityCount).includes("ConditionalCheckFailed")) throw pickupTaken();
    if (!outcome.ok) throw await versionConflict(oldKey);
  },

  async remove(organizationId, visitId, previous) {
    const outcome = await writeWithHubReferences(
      [
        deleteVersioned(keys.visit(organizationId, previous.hubId, visitId), previous.version),
        { Delete: { TableName: tableName(), Key: keys.visitRef(organizationId, visitId) } },
        ...(previous.pickupVisitId !== null ? [releasePickup(organizationId, previous.pickupVisitId)] : []),
      ],
      { organizationId, kind: "visit", from: previous.hubId },
    );
    return outcome.ok;
  },

  async list(organizationId, filter) {
    // A hub (asked for, or each hub a hub-limited token allows) is read from its own partition, so
    // no other hub's visit is read and skipped; otherwise the organization-wide index.
    const hubIds = filter.hubId !== undefined ? [filter.hubId] : [...new Set(filter.allowedHubIds)];
    const page =
      hubIds.length > 0
        ? await queryPageAcross<Record<string, unknown>>(
            hubIds.map((hubId) => hubRead(organizationId, hubId, filter)),
            filter.limit,
            filter.cursor,
          )
        : await queryPage<Record<string, unknown>>({
            index: "GSI2",
            partition: keys.visitsOfOrganization(organizationId),
            limit: filter.limit,
            cursor: filter.cursor,
            filter: statusFilter(filter),
          });
    return { items: page.items.map(toVisit), nextCursor: page.nextCursor };
  },

  async deliveryOf(organizationId, pickupVisitId) {
    const output = await documentClient().send(
      new GetCommand({ TableName: tableName(), Key: keys.pickupClaim(organizationId, pickupVisitId), ConsistentRead: true }),
    );
    return typeof output.Item?.deliveryVisitId === "string" ? output.Item.deliveryVisitId : undefined;
  },

  /** The hub's active visits, oldest first (the sparse index is ordered by creation), at most `max`. */
  async oldestActive(organizationId, hubId, max) {
    const items = await queryUpTo({ index: "GSI1", partition: keys.activeVisits(organizationId, hubId), max });
    return items.map(toVisit);
  },

  async markDispatched(organizationId, hubId, visitId, dispatch, updatedTime) {
    const active = activeVisitStatuses.map((_, i) => `:active${i}`);
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.visit(organizationId, hubId, visitId),
          ConditionExpression: `#status IN (${active.join(", ")})`,
          // Leaving the active statuses = leaving the sparse index (REMOVE its keys).
          UpdateExpression:
            "SET #status = :assigned, #vehicle = :vehicle, #result = :result, #order = :order, #eta = :eta, #etd = :etd, #updatedTime = :updatedTime ADD #version :one REMOVE GSI1PK, GSI1SK",
          ExpressionAttributeNames: {
            "#status": "status",
            "#vehicle": "assignedVehicleId",
            "#result": "routingResultId",
            "#order": "routePlannedOrder",
            "#eta": "eta",
            "#etd": "etd",
            "#updatedTime": "updatedTime",
            "#version": "version",
          },
          ExpressionAttributeValues: {
            ...Object.fromEntries(activeVisitStatuses.map((status, i) => [`:active${i}`, status])),
            ":assigned": "ASSIGNED" satisfies VisitStatus,
            ":vehicle": dispatch.assignedVehicleId,
            ":result": dispatch.routingResultId,
            ":order": dispatch.routePlannedOrder,
            ":eta": dispatch.eta,
            ":etd": dispatch.etd,
            ":updatedTime": updatedTime,
            ":one": 1,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  },
};

/**
 * The coordinates of these visits of one hub (a routing result's unassigned visits, for its map):
 * one BatchGet per 100 keys, projected to id and coordinate; visits gone or moved are left out.
 */
export async function visitPositions(organizationId: string, hubId: string, visitIds: readonly string[]): Promise<Map<string, { lat: number; lng: number }>> {
  const positions = new Map<string, { lat: number; lng: number }>();
  const unique = [...new Set(visitIds)];
  for (let i = 0; i < unique.length; i += 100) {
    let requested: Array<Record<string, unknown>> | undefined = unique.slice(i, i + 100).map((id) => keys.visit(organizationId, hubId, id) as unknown as Record<string, unknown>);
    for (let round = 0; requested && requested.length > 0 && round < 10; round++) {
      const output = await documentClient().send(
        new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: requested, ProjectionExpression: "#id, coordinate", ExpressionAttributeNames: { "#id": "_id" } } } }),
      );
      for (const item of output.Responses?.[tableName()] ?? []) {
        const coordinate = item.coordinate as { lat?: unknown; lng?: unknown } | undefined;
        if (typeof item._id === "string" && typeof coordinate?.lat === "number" && typeof coordinate.lng === "number") {
          positions.set(item._id, { lat: coordinate.lat, lng: coordinate.lng });
        }
      }
      requested = output.UnprocessedKeys?.[tableName()]?.Keys as Array<Record<string, unknown>> | undefined;
    }
  }
  return positions;
}

/** The routing result a visit was last dispatched by (null when never; undefined when the visit is gone). One consistent read. */
export async function visitRoutingResultId(organizationId: string, hubId: string, visitId: string): Promise<string | null | undefined> {
  const output = await documentClient().send(
    new GetCommand({ TableName: tableName(), Key: keys.visit(organizationId, hubId, visitId), ConsistentRead: true, ProjectionExpression: "routingResultId" }),
  );
  if (!output.Item) return undefined;
  return (output.Item.routingResultId as string | null | undefined) ?? null;
}
