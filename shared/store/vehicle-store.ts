import { type Vehicle, vehicleSchema } from "#shared/domain/vehicles/schema";
import type { VehicleListFilter, VehicleStore } from "#shared/domain/vehicles/service";
import { deleteVersioned, putNew, putVersioned, versionConflict, writeWithHubReferences } from "#shared/store/hub-store";
import { concurrentUpdateError, getVersioned } from "#shared/store/items";
import { keys } from "#shared/store/keys";
import { queryPage, queryPageAcross } from "#shared/store/pagination";

/** Items are read back through the schema: known fields only, in the documented order. */
function vehicleItem(vehicle: Vehicle): Record<string, unknown> {
  return {
    ...vehicle,
    entity: "vehicle",
    GSI1PK: keys.vehiclesByHub(vehicle.organizationId, vehicle.hubId),
    GSI1SK: `${keys.vehiclePrefix}${vehicle._id}`,
  };
}

function tagFilter(filter: VehicleListFilter) {
  return filter.tag !== undefined ? { expression: "contains(tags, :tag)", values: { ":tag": filter.tag } } : undefined;
}

export const dynamoVehicleStore: VehicleStore = {
  async insert(vehicle) {
    const outcome = await writeWithHubReferences([putNew(keys.vehicle(vehicle.organizationId, vehicle._id), vehicleItem(vehicle))], {
      organizationId: vehicle.organizationId,
      kind: "vehicle",
      to: vehicle.hubId,
    });
    // Ids are fresh ObjectIds; a collision means something is badly wrong, not a client mistake.
    if (!outcome.ok) throw concurrentUpdateError();
  },

  async find(organizationId, vehicleId) {
    const found = await getVersioned<Vehicle>(keys.vehicle(organizationId, vehicleId));
    return found && { vehicle: vehicleSchema.parse(found.value), version: found.version };
  },

  /** Moving to another hub moves the reference count in the same transaction. */
  async replace(vehicle, previous) {
    const key = keys.vehicle(vehicle.organizationId, vehicle._id);
    const outcome = await writeWithHubReferences([putVersioned(key, vehicleItem(vehicle), previous.version)], {
      organizationId: vehicle.organizationId,
      kind: "vehicle",
      from: previous.hubId,
      to: vehicle.hubId,
    });
    if (!outcome.ok) throw await versionConflict(key);
  },

  async remove(organizationId, vehicleId, previous) {
    const outcome = await writeWithHubReferences([deleteVersioned(keys.vehicle(organizationId, vehicleId), previous.version)], {
      organizationId,
      kind: "vehicle",
      from: previous.hubId,
    });
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
    return { items: page.items.map((item) => vehicleSchema.parse(item)), nextCursor: page.nextCursor };
  },
};
