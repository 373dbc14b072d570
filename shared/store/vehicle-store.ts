import { type Vehicle, vehicleSchema } from "#shared/domain/vehicles/schema";
import type { VehicleListFilter, VehicleStore } from "#shared/domain/vehicles/service";
import { concurrentUpdateError, deleteItem, getVersioned, insertItem, replaceItem } from "#shared/store/items";
import { keys } from "#shared/store/keys";
import { queryPage } from "#shared/store/pagination";

/** Items are read back through the schema: known fields only, in the documented order. */
function vehicleItem(vehicle: Vehicle): Record<string, unknown> {
  return {
    ...vehicle,
    entity: "vehicle",
    GSI1PK: keys.vehiclesByHub(vehicle.organizationId, vehicle.hubId),
    GSI1SK: `${keys.vehiclePrefix}${vehicle._id}`,
  };
}

function listFilter(filter: VehicleListFilter) {
  const conditions: string[] = [];
  const values: Record<string, unknown> = {};
  if (filter.tag !== undefined) {
    conditions.push("contains(tags, :tag)");
    values[":tag"] = filter.tag;
  }
  if (filter.hubId === undefined && filter.allowedHubIds.length > 0) {
    const placeholders = filter.allowedHubIds.slice(0, 100).map((hubId, i) => {
      values[`:hub${i}`] = hubId;
      return `:hub${i}`;
    });
    conditions.push(`hubId IN (${placeholders.join(", ")})`);
  }
  return conditions.length ? { expression: conditions.join(" AND "), values } : undefined;
}

export const dynamoVehicleStore: VehicleStore = {
  async insert(vehicle) {
    const inserted = await insertItem(keys.vehicle(vehicle.organizationId, vehicle._id), vehicleItem(vehicle));
    // Ids are fresh ObjectIds; a collision means something is badly wrong, not a client mistake.
    if (!inserted) throw concurrentUpdateError();
  },

  async find(organizationId, vehicleId) {
    const found = await getVersioned<Vehicle>(keys.vehicle(organizationId, vehicleId));
    return found && { vehicle: vehicleSchema.parse(found.value), version: found.version };
  },

  async replace(vehicle, expectedVersion) {
    await replaceItem(keys.vehicle(vehicle.organizationId, vehicle._id), vehicleItem(vehicle), expectedVersion);
  },

  remove(organizationId, vehicleId, expectedVersion) {
    return deleteItem(keys.vehicle(organizationId, vehicleId), expectedVersion);
  },

  async list(organizationId, filter) {
    const page = await queryPage<Record<string, unknown>>(
      filter.hubId !== undefined
        ? { index: "GSI1", partition: keys.vehiclesByHub(organizationId, filter.hubId), limit: filter.limit, cursor: filter.cursor, filter: listFilter(filter) }
        : { partition: keys.organizationPartition(organizationId), sortKeyPrefix: keys.vehiclePrefix, limit: filter.limit, cursor: filter.cursor, filter: listFilter(filter) },
    );
    return { items: page.items.map((item) => vehicleSchema.parse(item)), nextCursor: page.nextCursor };
  },
};
