import { BatchGetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { ServiceUnavailableError } from "#shared/domain/errors";
import {
  emptyPositionState,
  POSITION_HISTORY_DAYS,
  type PositionState,
  type PositionStore,
  type VehiclePosition,
} from "#shared/domain/vehicles/positions";
import { batchPut } from "#shared/store/batch-write";
import { documentClient, isConditionalCheckFailed, tableName } from "#shared/store/dynamo";
import { type ItemKey, keys } from "#shared/store/keys";
import { queryPage } from "#shared/store/pagination";
import { dynamoVehicleStore } from "#shared/store/vehicle-store";

/**
 * Positions over DynamoDB (docs/api/execution.md, "Positions"). Everything lives in the vehicle's own
 * partition `ORG#o#VEH#v`: the state item `POSITION` (latest position, rate window, allowance;
 * replaced under its `revision`) and one item per sample `POS#<at>` with the table's TTL attribute
 * `expiresAt` (30 days after the sample). Samples are written with BatchWriteItem, which cannot be
 * conditional: the key is the sample time, so a sample written twice is the same item with the same
 * attributes, and duplicates are counted from a read of exactly the keys that may exist.
 */
const BATCH_GET_MAX = 100;
const UNPROCESSED_ATTEMPTS = 6;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const backoffMs = (attempt: number) => Math.min(1000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2);

const optionalNumber = (value: unknown) => (typeof value === "number" ? value : null);

function positionOf(item: Record<string, unknown>): VehiclePosition {
  return {
    at: String(item.at),
    lat: Number(item.lat),
    lng: Number(item.lng),
    accuracyM: optionalNumber(item.accuracyM),
    speedKmh: optionalNumber(item.speedKmh),
    headingDeg: optionalNumber(item.headingDeg),
  };
}

/** Null fields are left out of the item (smaller samples: every byte counts at one write per sample). */
function positionAttributes(position: VehiclePosition): Record<string, unknown> {
  return Object.fromEntries(Object.entries(position).filter(([, value]) => value !== null));
}

function stateOf(item: Record<string, unknown> | undefined): PositionState {
  if (!item) return emptyPositionState;
  return {
    latest: item.latest && typeof item.latest === "object" ? positionOf(item.latest as Record<string, unknown>) : null,
    rateWindow: optionalNumber(item.rateWindow),
    rateCount: Number(item.rateCount ?? 0),
    allowanceMonth: typeof item.allowanceMonth === "string" ? item.allowanceMonth : null,
    allowance: Number(item.allowance ?? 0),
    liveRefreshedAt: typeof item.liveRefreshedAt === "string" ? item.liveRefreshedAt : null,
    revision: Number(item.revision ?? 0),
  };
}

/** BatchGetItem of up to 100 keys, unprocessed keys asked again (with backoff) until answered. */
async function batchGet(requested: ItemKey[], options: { consistent?: boolean; projection?: string[] } = {}) {
  const found: Record<string, unknown>[] = [];
  const names = Object.fromEntries((options.projection ?? []).map((attribute, i) => [`#p${i}`, attribute]));
  let pending: Record<string, unknown>[] = requested.map((key) => ({ ...key }));
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt >= UNPROCESSED_ATTEMPTS) throw new ServiceUnavailableError("The table is busy; retry shortly.", 1);
    if (attempt > 0) await sleep(backoffMs(attempt));
    const output = await documentClient().send(
      new BatchGetCommand({
        RequestItems: {
          [tableName()]: {
            Keys: pending,
            ConsistentRead: options.consistent,
            ...(options.projection ? { ProjectionExpression: Object.keys(names).join(", "), ExpressionAttributeNames: names } : {}),
          },
        },
      }),
    );
    found.push(...(output.Responses?.[tableName()] ?? []));
    pending = output.UnprocessedKeys?.[tableName()]?.Keys ?? [];
  }
  return found;
}

export const dynamoPositionStore: PositionStore = {
  async read(organizationId, vehicleId) {
    const vehicleKey = keys.vehicle(organizationId, vehicleId);
    const items = await batchGet([vehicleKey, keys.vehiclePositionState(organizationId, vehicleId)], { consistent: true });
    const vehicleItem = items.find((item) => item.SK === vehicleKey.SK);
    const stateItem = items.find((item) => item.SK !== vehicleKey.SK);
    return {
      vehicle: vehicleItem && {
        vehicleId,
        hubId: String(vehicleItem.hubId),
        name: String(vehicleItem.name),
        assignee: typeof vehicleItem.assignee === "string" ? vehicleItem.assignee : null,
      },
      state: stateOf(stateItem),
    };
  },

  async storedTimes(organizationId, vehicleId, ats) {
    const items = await batchGet(
      ats.map((at) => keys.vehiclePositionSample(organizationId, vehicleId, at)),
      { consistent: true, projection: ["at"] },
    );
    return new Set(items.map((item) => String(item.at)));
  },

  async writeState(organizationId, vehicleId, next) {
    const { latest, liveRefreshedAt, ...rest } = next;
    try {
      await documentClient().send(
        new PutCommand({
          TableName: tableName(),
          Item: {
            ...keys.vehiclePositionState(organizationId, vehicleId),
            entity: "positionState",
            ...rest,
            ...(latest ? { latest: positionAttributes(latest) } : {}),
            ...(liveRefreshedAt ? { liveRefreshedAt } : {}),
          },
          ConditionExpression: next.revision === 1 ? "attribute_not_exists(PK)" : "revision = :previous",
          ...(next.revision === 1 ? {} : { ExpressionAttributeValues: { ":previous": next.revision - 1 } }),
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  },

  async appendHistory(organizationId, vehicleId, samples) {
    await batchPut(
      samples.map((sample) => ({
        ...keys.vehiclePositionSample(organizationId, vehicleId, sample.at),
        ...positionAttributes(sample),
        // Seconds since the epoch: the table's TTL attribute (shared/store/table-definition.ts).
        expiresAt: Math.floor(Date.parse(sample.at) / 1000) + POSITION_HISTORY_DAYS * 86_400,
      })),
      "The table is busy; part of the history was not stored. Send the samples again.",
    );
  },

  async history(organizationId, vehicleId, fromAt, toAt, limit, cursor) {
    const page = await queryPage<Record<string, unknown>>({
      partition: keys.vehiclePartition(organizationId, vehicleId),
      sortKeyBetween: [`${keys.vehiclePositionSamplePrefix}${fromAt}`, `${keys.vehiclePositionSamplePrefix}${toAt}`],
      limit,
      cursor,
    });
    return { items: page.items.map(positionOf), nextCursor: page.nextCursor };
  },

  async vehicles(organizationId, filter) {
    const page = await dynamoVehicleStore.list(organizationId, filter);
    return {
      items: page.items.map(({ vehicle }) => ({
        vehicleId: vehicle._id,
        hubId: vehicle.hubId,
        name: vehicle.name,
        assignee: vehicle.assignee ?? null,
      })),
      nextCursor: page.nextCursor,
    };
  },

  async latestOf(organizationId, vehicleIds) {
    const latest = new Map<string, VehiclePosition>();
    for (let start = 0; start < vehicleIds.length; start += BATCH_GET_MAX) {
      const ids = vehicleIds.slice(start, start + BATCH_GET_MAX);
      const items = await batchGet(
        ids.map((id) => keys.vehiclePositionState(organizationId, id)),
        { projection: ["PK", "latest"] },
      );
      for (const item of items) {
        const vehicleId = ids.find((id) => keys.vehiclePositionState(organizationId, id).PK === item.PK);
        if (vehicleId !== undefined && item.latest && typeof item.latest === "object")
          latest.set(vehicleId, positionOf(item.latest as Record<string, unknown>));
      }
    }
    return latest;
  },
};
