import { type Vehicle, vehicleSchema } from "#shared/domain/vehicles/schema";
import type { VehicleListFilter, VehicleStore } from "#shared/domain/vehicles/service";
import { deleteVersioned, putNew, putVersioned, versionConflict, writeWithHubReferences } from "#shared/store/hub-store";
import { concurrentUpdateError, getVersioned } from "#shared/store/items";
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
    const page = await queryPage<Record<string, unknown>>(
      filter.hubId !== undefined
        ? { index: "GSI1", partition: keys.vehiclesByHub(organizationId, filter.hubId), limit: filter.limit, cursor: filter.cursor, filter: listFilter(filter) }
        : { partition: keys.organizationPartition(organizationId), sortKeyPrefix: keys.vehiclePrefix, limit: filter.limit, cursor: filter.cursor, filter: listFilter(filter) },
    );
    return { items: page.items.map((item) => vehicleSchema.parse(item)), nextCursor: page.nextCursor };
  },
};
