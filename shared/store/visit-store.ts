import { BatchGetCommand, GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { ConflictError, ValidationError } from "#shared/domain/errors";
import {
  type Visit,
  type VisitStatus,
  activeVisitStatuses,
  isActiveVisitStatus,
  type VisitTransition,
  visitSchema,
  visitTransitionSchema,
} from "#shared/domain/visits/schema";
import type { StatusChange, VisitListFilter, VisitStore } from "#shared/domain/visits/service";
import type { DispatchHistoryEntry } from "#shared/domain/visits/dispatch-history";
import { batchPut } from "#shared/store/batch-write";
import { documentClient, isConditionalCheckFailed, tableName, type TransactItem } from "#shared/store/dynamo";
import { hubRefAttributes, previousCondition, writeHubChild } from "#shared/store/hub-references";
import { concurrentUpdateError } from "#shared/store/items";
import { conditionCheck, put, remove, transactLabelled, versionConflict } from "#shared/store/transactions";
import { formatDateTimeUtc } from "#shared/domain/time";
import { keys, withoutStorageAttributes } from "#shared/store/keys";
import { type PartitionRead, queryPage, queryPageAcross, queryUpTo } from "#shared/store/pagination";

/**
 * Visits live in their hub's partition (`ORG#o#HUB#h` / `VISIT#id`), so a run reads one hub's
 * visits without touching others. Three more things are kept in step, in the same transaction:
 * - the sparse active-visits index (GSI1 `ORG#o#HUB#h#ACTIVE` / `<id>`), present only while the
 *   status is UNASSIGNED or ONGOING; ids grow with creation time, so the index is oldest first;
 * - GSI2 `ORG#o#VISIT` / `VISIT#id`, the organization-wide list;
 * - a lookup item `ORG#o` / `VISITREF#id` → hubId, so a visit is read by id alone (strongly consistent);
 * - pickup-and-delivery pairs: the claim item `ORG#o / PICKUP#<pickup id>` → its one delivery.
 * The visit item is itself the hub's reference (shared/store/hub-references.ts): it lives in the
 * hub's partition, which a hub delete queries.
 *
 * Pair rules hold inside the transaction that makes or changes a pair, not only in the service's
 * reads before it: a delivery naming a pickup checks the pickup's item in the delivery's hub
 * partition (exists, same hub) with no pickup of its own (not itself a delivery) and claims it
 * (no other delivery); a visit that becomes a delivery, moves hub or is deleted checks that its own
 * claim item is absent (it is nobody's pickup).
 */
function visitItem(visit: Visit): Record<string, unknown> {
  return {
    ...visit,
    ...hubRefAttributes,
    entity: "visit",
    ...(isActiveVisitStatus(visit.status) ? { GSI1PK: keys.activeVisits(visit.organizationId, visit.hubId), GSI1SK: visit._id } : {}),
    GSI2PK: keys.visitsOfOrganization(visit.organizationId),
    GSI2SK: `${keys.visitPrefix}${visit._id}`,
  };
}

function refItem(visit: Visit): Record<string, unknown> {
  return { entity: "visitRef", hubId: visit.hubId };
}

type VisitMeaning =
  | { kind: "visit" }
  | { kind: "pickupVisit" }
  | { kind: "pickupClaim" }
  | { kind: "ownClaim" }
  | { kind: "vehicleHold" }
  | { kind: "other" };

/**
 * The items a status change adds to the visit's write: its history item (keyed by the version the
 * change produces, so it exists once) and the vehicle's current-stop item, taken only when free or
 * already this visit's, freed only when it is this visit's.
 */
function statusChangeItems(visit: Visit, change: StatusChange | undefined): Array<[TransactItem, VisitMeaning]> {
  if (!change) return [];
  const o = visit.organizationId;
  const items: Array<[TransactItem, VisitMeaning]> = [
    [
      put(
        {
          ...keys.visitHistory(o, visit._id, change.transition.version),
          entity: "visitTransition",
          visitId: visit._id,
          hubId: visit.hubId,
          ...change.transition,
        },
        { ConditionExpression: "attribute_not_exists(PK)" },
      ),
      { kind: "visit" },
    ],
  ];
  const hold = change.vehicleHold;
  if (hold) {
    const key = keys.vehicleCurrentStop(o, hold.vehicleId);
    const mine = {
      ConditionExpression: "attribute_not_exists(PK) OR visitId = :visit",
      ExpressionAttributeValues: { ":visit": visit._id },
    };
    items.push(
      hold.take
        ? [put({ ...key, entity: "vehicleCurrentStop", visitId: visit._id, status: visit.status }, mine), { kind: "vehicleHold" }]
        : [remove(key, mine), { kind: "other" }],
    );
  }
  return items;
}

/** Claims the pickup for this delivery; fails its condition when another delivery holds it. */
function claimPickup(visit: Visit): [TransactItem, VisitMeaning] {
  return [
    put(
      { ...keys.pickupClaim(visit.organizationId, visit.pickupVisitId as string), entity: "pickupClaim", deliveryVisitId: visit._id },
      {
        ConditionExpression: "attribute_not_exists(PK) OR deliveryVisitId = :delivery",
        ExpressionAttributeValues: { ":delivery": visit._id },
      },
    ),
    { kind: "pickupClaim" },
  ];
}

/** The pickup is a visit of the delivery's hub (its partition) and not itself a delivery. */
function pickupIsFree(visit: Visit): [TransactItem, VisitMeaning] {
  return [
    conditionCheck(keys.visit(visit.organizationId, visit.hubId, visit.pickupVisitId as string), {
      ConditionExpression: "attribute_exists(PK) AND (attribute_not_exists(pickupVisitId) OR attribute_type(pickupVisitId, :null))",
      ExpressionAttributeValues: { ":null": "NULL" },
    }),
    { kind: "pickupVisit" },
  ];
}

/** This visit is nobody's pickup (no claim item names it). */
function notAPickup(organizationId: string, visitId: string): [TransactItem, VisitMeaning] {
  return [
    conditionCheck(keys.pickupClaim(organizationId, visitId), { ConditionExpression: "attribute_not_exists(PK)" }),
    { kind: "ownClaim" },
  ];
}

function releasePickup(organizationId: string, pickupId: string): [TransactItem, VisitMeaning] {
  return [remove(keys.pickupClaim(organizationId, pickupId)), { kind: "other" }];
}

/** A pickup claimed meanwhile by another delivery: the same 400 the service gives when it sees the claim. */
const pickupTaken = () => ValidationError.single("pickupVisitId", "that visit is already the pickup of another delivery");

/** The pair items of a write from `previous` to `next` (either absent for a create or delete). */
function pairItems(
  organizationId: string,
  visitId: string,
  previous: { hubId: string; pickupVisitId: string | null } | undefined,
  next: Visit | undefined,
): Array<[TransactItem, VisitMeaning]> {
  const items: Array<[TransactItem, VisitMeaning]> = [];
  const pickupChanged = previous?.pickupVisitId !== next?.pickupVisitId;
  const hubChanged = previous !== undefined && next !== undefined && previous.hubId !== next.hubId;
  if (previous?.pickupVisitId && pickupChanged) items.push(releasePickup(organizationId, previous.pickupVisitId));
  if (next?.pickupVisitId && (pickupChanged || hubChanged)) {
    items.push(pickupIsFree(next));
    if (pickupChanged) items.push(claimPickup(next));
  }
  // Becoming a delivery, moving hub or going away: only a visit that is nobody's pickup.
  const becomesDelivery = next?.pickupVisitId != null && pickupChanged;
  // (A new visit's fresh id is nobody's pickup.)
  if (previous !== undefined && (next === undefined || hubChanged || becomesDelivery)) items.push(notAPickup(organizationId, visitId));
  return items;
}

function toVisit(item: Record<string, unknown>): Visit {
  return visitSchema.parse(withoutStorageAttributes(item));
}

function statusFilter(filter: VisitListFilter): PartitionRead["filter"] {
  return filter.status !== undefined
    ? { expression: "#status = :status", names: { "#status": "status" }, values: { ":status": filter.status } }
    : undefined;
}

/** One hub's visits: an active status is read from the sparse index (only active visits are touched), else the hub's partition. */
function hubRead(organizationId: string, hubId: string, filter: VisitListFilter): PartitionRead {
  if (filter.status !== undefined && isActiveVisitStatus(filter.status)) {
    return { index: "GSI1", partition: keys.activeVisits(organizationId, hubId), filter: statusFilter(filter) };
  }
  return { partition: keys.visit(organizationId, hubId, "").PK, sortKeyPrefix: keys.visitPrefix, filter: statusFilter(filter) };
}

/** Turns failed pair items into the service's 400s (a read says which rule failed); undefined when none failed. */
async function pairFailure(
  failed: VisitMeaning[],
  organizationId: string,
  visitId: string,
  next: Visit | undefined,
  previous: { hubId: string } | undefined,
): Promise<Error | undefined> {
  const kinds = new Set(failed.map((meaning) => meaning.kind));
  const fail = (message: string) => ValidationError.single("pickupVisitId", message);
  if (kinds.has("ownClaim")) {
    const delivery = await dynamoVisitStore.deliveryOf(organizationId, visitId);
    if (next === undefined)
      return ValidationError.single(
        "visitId",
        `this visit is the pickup of delivery ${delivery}: delete the delivery or clear its pickupVisitId first`,
      );
    if (previous !== undefined && next.hubId !== previous.hubId)
      return ValidationError.single(
        "hubId",
        `this visit is the pickup of delivery ${delivery}, which is in hub ${previous.hubId}: both must stay in one hub`,
      );
    return fail(`this visit is the pickup of delivery ${delivery}: a visit is in at most one pair`);
  }
  if (kinds.has("pickupVisit") && next?.pickupVisitId) {
    const pickup = await dynamoVisitStore.find(organizationId, next.pickupVisitId);
    if (!pickup) return fail("must name an existing visit");
    if (pickup.visit.hubId !== next.hubId) return fail("the pickup must be a visit of the same hub");
    return fail("that visit is itself a delivery: a visit is in at most one pair");
  }
  if (kinds.has("pickupClaim")) return pickupTaken();
  return undefined;
}

export const dynamoVisitStore: VisitStore = {
  async insert(visit) {
    const failed = await writeHubChild<VisitMeaning>(
      { organizationId: visit.organizationId, kind: "visit", childId: visit._id, to: visit.hubId },
      () => [
        [
          put(
            { ...visitItem(visit), ...keys.visit(visit.organizationId, visit.hubId, visit._id), version: 1 },
            { ConditionExpression: "attribute_not_exists(PK)" },
          ),
          { kind: "visit" },
        ],
        [
          put(
            { ...refItem(visit), ...keys.visitRef(visit.organizationId, visit._id) },
            { ConditionExpression: "attribute_not_exists(PK)" },
          ),
          { kind: "visit" },
        ],
        ...pairItems(visit.organizationId, visit._id, undefined, visit),
      ],
    );
    if (failed === undefined) return;
    const pairError = await pairFailure(failed, visit.organizationId, visit._id, visit, undefined);
    if (pairError) throw pairError;
    // Ids are fresh ObjectIds; a collision means something is badly wrong, not a client mistake.
    throw concurrentUpdateError();
  },

  async find(organizationId, visitId) {
    const client = documentClient();
    const ref = await client.send(
      new GetCommand({ TableName: tableName(), Key: keys.visitRef(organizationId, visitId), ConsistentRead: true }),
    );
    if (typeof ref.Item?.hubId !== "string") return undefined;
    const output = await client.send(
      new GetCommand({ TableName: tableName(), Key: keys.visit(organizationId, ref.Item.hubId, visitId), ConsistentRead: true }),
    );
    if (!output.Item) return undefined;
    return { visit: toVisit(output.Item), version: Number(output.Item.version ?? 0) };
  },

  async replace(visit, previous, change) {
    const oldKey = keys.visit(visit.organizationId, previous.hubId, visit._id);
    const entity = (legacy: boolean): Array<[TransactItem, VisitMeaning]> => {
      const items: Array<[TransactItem, VisitMeaning]> = [];
      if (previous.hubId === visit.hubId) {
        items.push([
          put({ ...visitItem(visit), ...oldKey, version: previous.version + 1 }, previousCondition(previous.version, legacy)),
          { kind: "visit" },
        ]);
      } else {
        // Another hub is another partition: delete here, create there, repoint the lookup item.
        items.push(
          [remove(oldKey, previousCondition(previous.version, legacy)), { kind: "visit" }],
          [
            put(
              { ...visitItem(visit), ...keys.visit(visit.organizationId, visit.hubId, visit._id), version: previous.version + 1 },
              { ConditionExpression: "attribute_not_exists(PK)" },
            ),
            { kind: "visit" },
          ],
          [put({ ...refItem(visit), ...keys.visitRef(visit.organizationId, visit._id) }), { kind: "other" }],
        );
      }
      return [...items, ...pairItems(visit.organizationId, visit._id, previous, visit), ...statusChangeItems(visit, change)];
    };
    const failed = await writeHubChild<VisitMeaning>(
      { organizationId: visit.organizationId, kind: "visit", childId: visit._id, from: previous.hubId, to: visit.hubId },
      entity,
      {
        previous: { key: oldKey, version: previous.version, label: (meaning) => meaning.kind === "visit" },
      },
    );
    if (failed === undefined) return;
    if (failed.some((meaning) => meaning.kind === "visit")) throw await versionConflict(oldKey);
    if (failed.some((meaning) => meaning.kind === "vehicleHold"))
      throw new ConflictError(
        `Vehicle ${change?.vehicleHold?.vehicleId} is already heading to or at another visit: complete, fail or undo that one first.`,
        "visit-411",
      );
    throw (await pairFailure(failed, visit.organizationId, visit._id, visit, previous)) ?? concurrentUpdateError();
  },

  async remove(organizationId, visitId, previous) {
    const key = keys.visit(organizationId, previous.hubId, visitId);
    const failed = await writeHubChild<VisitMeaning>(
      { organizationId, kind: "visit", childId: visitId, from: previous.hubId },
      (legacy) => [
        [remove(key, previousCondition(previous.version, legacy)), { kind: "visit" }],
        [remove(keys.visitRef(organizationId, visitId)), { kind: "other" }],
        ...pairItems(organizationId, visitId, previous, undefined),
      ],
      { previous: { key, version: previous.version, label: (meaning) => meaning.kind === "visit" } },
    );
    if (failed === undefined) return true;
    if (failed.some((meaning) => meaning.kind === "visit")) return false;
    throw (await pairFailure(failed, organizationId, visitId, undefined, previous)) ?? concurrentUpdateError();
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

  async history(organizationId, visitId, limit, cursor) {
    const page = await queryPage<Record<string, unknown>>({
      partition: keys.visitHistoryPartition(organizationId, visitId),
      limit,
      cursor,
    });
    return { items: page.items.map((item) => visitTransitionSchema.parse(item)), nextCursor: page.nextCursor };
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

  async markDispatched(organizationId, hubId, visitId, dispatch, updatedTime, dispatchedBy, pinnedFromResultId, releasedFromResultId) {
    const active = activeVisitStatuses.map((_, i) => `:active${i}`);
    // A re-plan's pinned visit is re-sequenced only while it is still ASSIGNED to that vehicle under the result the run read;
    // a released one (free to move) only while it is still ASSIGNED under that result, on whichever vehicle.
    const pinned =
      (pinnedFromResultId !== undefined ? " OR (#status = :assigned AND #result = :pinnedFrom AND #vehicle = :vehicle)" : "") +
      (releasedFromResultId !== undefined ? " OR (#status = :assigned AND #result = :releasedFrom)" : "");
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.visit(organizationId, hubId, visitId),
          ConditionExpression: `#status IN (${active.join(", ")})${pinned}`,
          // Leaving the active statuses = leaving the sparse index (REMOVE its keys).
          UpdateExpression:
            "SET #status = :assigned, #vehicle = :vehicle, #result = :result, #order = :order, #eta = :eta, #etd = :etd, #by = :by, #updatedTime = :updatedTime ADD #version :one REMOVE GSI1PK, GSI1SK",
          ExpressionAttributeNames: {
            "#status": "status",
            "#vehicle": "assignedVehicleId",
            "#result": "routingResultId",
            "#order": "routePlannedOrder",
            "#eta": "eta",
            "#etd": "etd",
            "#by": "dispatchedBy",
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
            ":by": dispatchedBy,
            ":updatedTime": updatedTime,
            ":one": 1,
            ...(pinnedFromResultId !== undefined ? { ":pinnedFrom": pinnedFromResultId } : {}),
            ...(releasedFromResultId !== undefined ? { ":releasedFrom": releasedFromResultId } : {}),
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
export async function visitPositions(
  organizationId: string,
  hubId: string,
  visitIds: readonly string[],
): Promise<Map<string, { lat: number; lng: number }>> {
  const positions = new Map<string, { lat: number; lng: number }>();
  const unique = [...new Set(visitIds)];
  for (let i = 0; i < unique.length; i += 100) {
    let requested: Array<Record<string, unknown>> | undefined = unique
      .slice(i, i + 100)
      .map((id) => keys.visit(organizationId, hubId, id) as unknown as Record<string, unknown>);
    for (let round = 0; requested && requested.length > 0 && round < 10; round++) {
      const output = await documentClient().send(
        new BatchGetCommand({
          RequestItems: {
            [tableName()]: { Keys: requested, ProjectionExpression: "#id, coordinate", ExpressionAttributeNames: { "#id": "_id" } },
          },
        }),
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

/**
 * A re-plan's dropped released visit back to the pool (shared/domain/routing-results/dispatch.ts,
 * ReturnVisitToPool): read, then one transaction — the visit UNASSIGNED with its dispatch fields cleared and
 * back in the active index, conditional on the version read and on still being ASSIGNED under `fromResultId`,
 * and its history item (keyed by the version produced). A concurrent change re-reads and decides again.
 */
export async function returnVisitToPool(
  organizationId: string,
  hubId: string,
  visitId: string,
  fromResultId: string,
  transition: (version: number) => VisitTransition,
): Promise<boolean> {
  const key = keys.visit(organizationId, hubId, visitId);
  for (let attempt = 0; attempt < 5; attempt++) {
    const output = await documentClient().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
    const item = output.Item;
    if (item?.status !== "ASSIGNED" || item.routingResultId !== fromResultId) return false;
    const version = Number(item.version ?? 0);
    const change = transition(version);
    const failed = await transactLabelled([
      [
        {
          Update: {
            TableName: tableName(),
            Key: key,
            ConditionExpression: "#version = :version AND #status = :assigned AND #result = :from",
            UpdateExpression:
              "SET #status = :unassigned, #vehicle = :null, #result = :null, #order = :null, #eta = :null, #etd = :null, #last = :last, #updatedTime = :updatedTime, GSI1PK = :gsi1pk, GSI1SK = :id ADD #version :one",
            ExpressionAttributeNames: {
              "#status": "status",
              "#vehicle": "assignedVehicleId",
              "#result": "routingResultId",
              "#order": "routePlannedOrder",
              "#eta": "eta",
              "#etd": "etd",
              "#last": "lastTransition",
              "#updatedTime": "updatedTime",
              "#version": "version",
            },
            ExpressionAttributeValues: {
              ":version": version,
              ":assigned": "ASSIGNED" satisfies VisitStatus,
              ":unassigned": "UNASSIGNED" satisfies VisitStatus,
              ":from": fromResultId,
              ":null": null,
              ":last": change,
              ":updatedTime": formatDateTimeUtc(new Date(change.at)),
              ":gsi1pk": keys.activeVisits(organizationId, hubId),
              ":id": visitId,
              ":one": 1,
            },
          },
        },
        "visit",
      ],
      [
        put(
          { ...keys.visitHistory(organizationId, visitId, change.version), entity: "visitTransition", visitId, hubId, ...change },
          { ConditionExpression: "attribute_not_exists(PK)" },
        ),
        "history",
      ],
    ]);
    if (failed === undefined) return true;
  }
  throw concurrentUpdateError();
}

/**
 * Appends dispatches to their visits' histories (the stream's entries, shared/domain/visits/dispatch-history.ts):
 * plain batched puts, keyed by the version each dispatch produced, so a replayed stream record rewrites
 * the same item. One write unit per entry.
 */
export async function recordDispatchHistory(entries: readonly DispatchHistoryEntry[]): Promise<void> {
  await batchPut(
    entries.map(({ organizationId, hubId, visitId, transition }) => ({
      ...keys.visitHistory(organizationId, visitId, transition.version),
      entity: "visitTransition",
      visitId,
      hubId,
      ...transition,
    })),
    "The table is busy; dispatch history entries were not stored.",
  );
}

/** The routing result a visit was last dispatched by (null when never; undefined when the visit is gone). One consistent read. */
export async function visitRoutingResultId(organizationId: string, hubId: string, visitId: string): Promise<string | null | undefined> {
  const output = await documentClient().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.visit(organizationId, hubId, visitId),
      ConsistentRead: true,
      ProjectionExpression: "routingResultId",
    }),
  );
  if (!output.Item) return undefined;
  return (output.Item.routingResultId as string | null | undefined) ?? null;
}
