import { type Vehicle, vehicleSchema } from "#shared/domain/vehicles/schema";
import type { CustomValuesWrite } from "#shared/domain/extensions/service";
import type { StoredCustomValues } from "#shared/domain/extensions/schema";
import type { StoredVehicle, VehicleListFilter, VehicleStore } from "#shared/domain/vehicles/service";
import { type CustomMeaning, customAttributes, customValueFailure, customValueItems, failedMeanings, parseCustomAttributes } from "#shared/store/extension-store";
import type { TransactItem } from "#shared/store/dynamo";
import { deleteVersioned, type EntityWriteOutcome, putNew, putVersioned, versionConflict, writeWithHubReferences } from "#shared/store/hub-store";
import { concurrentUpdateError, getVersioned } from "#shared/store/items";
import { keys } from "#shared/store/keys";
import { queryPage, queryPageAcross } from "#shared/store/pagination";

/** Items are read back through the schema: known fields only, in the documented order; custom values beside them. */
function vehicleItem(vehicle: Vehicle, custom: StoredCustomValues | undefined): Record<string, unknown> {
  return {
    ...vehicle,
    ...customAttributes(custom),
    entity: "vehicle",
    GSI1PK: keys.vehiclesByHub(vehicle.organizationId, vehicle.hubId),
    GSI1SK: `${keys.vehiclePrefix}${vehicle._id}`,
  };
}

function tagFilter(filter: VehicleListFilter) {
  return filter.tag !== undefined ? { expression: "contains(tags, :tag)", values: { ":tag": filter.tag } } : undefined;
}

function parseVehicle(item: Record<string, unknown>, version: number): StoredVehicle {
  return { vehicle: vehicleSchema.parse(item), version, custom: parseCustomAttributes(item) };
}

/**
 * The vehicle item, then its custom-value items (uniqueness claims moved, extension type checked),
 * in one transaction with the hub counters; a failed custom-value item is its own error (409 ext-001 / data-003).
 */
async function writeVehicle(
  vehicleItemWrite: TransactItem,
  custom: { items: TransactItem[]; meanings: CustomMeaning[] },
  change: Parameters<typeof writeWithHubReferences>[1],
): Promise<EntityWriteOutcome> {
  const outcome = await writeWithHubReferences([vehicleItemWrite, ...custom.items], change);
  if (outcome.ok) return outcome;
  const failure = customValueFailure("vehicle", failedMeanings(outcome.codes.slice(1), custom.meanings));
  if (failure && outcome.codes[0] !== "ConditionalCheckFailed") throw failure;
  return outcome;
}

export const dynamoVehicleStore: VehicleStore = {
  async insert(vehicle, custom?: CustomValuesWrite) {
    const outcome = await writeVehicle(
      putNew(keys.vehicle(vehicle.organizationId, vehicle._id), vehicleItem(vehicle, custom?.next)),
      customValueItems(vehicle.organizationId, vehicle._id, undefined, custom),
      { organizationId: vehicle.organizationId, kind: "vehicle", to: vehicle.hubId },
    );
    // Ids are fresh ObjectIds; a collision means something is badly wrong, not a client mistake.
    if (!outcome.ok) throw concurrentUpdateError();
  },

  async find(organizationId, vehicleId) {
    const found = await getVersioned<Record<string, unknown>>(keys.vehicle(organizationId, vehicleId));
    return found && parseVehicle(found.value, found.version);
  },

  /** Moving to another hub moves the reference count in the same transaction. */
  async replace(vehicle, previous, custom?: CustomValuesWrite) {
    const key = keys.vehicle(vehicle.organizationId, vehicle._id);
    const outcome = await writeVehicle(
      putVersioned(key, vehicleItem(vehicle, custom?.next ?? previous.custom), previous.version),
      customValueItems(vehicle.organizationId, vehicle._id, previous.custom, custom),
      { organizationId: vehicle.organizationId, kind: "vehicle", from: previous.vehicle.hubId, to: vehicle.hubId },
    );
    if (!outcome.ok) throw await versionConflict(key);
  },

  /** Deleting the vehicle releases its custom values' uniqueness claims in the same transaction. */
  async remove(organizationId, vehicleId, previous) {
    const outcome = await writeVehicle(
      deleteVersioned(keys.vehicle(organizationId, vehicleId), previous.version),
      customValueItems(organizationId, vehicleId, previous.custom, previous.custom ? "delete" : undefined),
      { organizationId, kind: "vehicle", from: previous.vehicle.hubId },
    );
    return outcome.ok;
  },

  async list(organizationId, filter) {
    // A hub (asked for, or each hub a hub-limited token allows) is read from the by-hub index, so
    // no other hub's vehicle is read and skipped.
    const hubIds = filter.hubId !== undefined ? [filter.hubId] : [...new Set(filter.allowedHubIds)];
    const page =
      hubIds.length > 0
        ? await queryPageAcross<Record<string, unknown>>(
            hubIds.map((hubId) => ({ index: "GSI1", partition: keys.vehiclesByHub(organizationId, hubId), filter: tagFilter(filter) })),
            filter.limit,
            filter.cursor,
          )
        : await queryPage<Record<string, unknown>>({
            partition: keys.organizationPartition(organizationId),
            sortKeyPrefix: keys.vehiclePrefix,
            limit: filter.limit,
            cursor: filter.cursor,
            filter: tagFilter(filter),
          });
    return { items: page.items.map((item) => parseVehicle(item, Number(item.version ?? 0))), nextCursor: page.nextCursor };
  },
};
