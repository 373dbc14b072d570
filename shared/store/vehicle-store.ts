import { type Vehicle, vehicleSchema } from "#shared/domain/vehicles/schema";
import type { CustomValuesWrite } from "#shared/domain/extensions/service";
import type { StoredCustomValues } from "#shared/domain/extensions/schema";
import type { StoredVehicle, VehicleListFilter, VehicleStore } from "#shared/domain/vehicles/service";
import {
  type CustomMeaning,
  type CustomValueItems,
  customAttributes,
  customValueFailure,
  customValueItems,
  parseCustomAttributes,
} from "#shared/store/extension-store";
import type { TransactItem } from "#shared/store/dynamo";
import { type HubReferenceChange, hubRefAttributes, previousCondition, writeHubChild } from "#shared/store/hub-references";
import { concurrentUpdateError, getVersioned } from "#shared/store/items";
import { type ItemKey, keys } from "#shared/store/keys";
import { queryPage, queryPageAcross } from "#shared/store/pagination";
import { put, remove, versionConflict } from "#shared/store/transactions";

/** Items are read back through the schema: known fields only, in the documented order; custom values beside them. */
function vehicleItem(vehicle: Vehicle, custom: StoredCustomValues | undefined): Record<string, unknown> {
  return {
    ...vehicle,
    ...customAttributes(custom),
    ...hubRefAttributes,
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

type VehicleMeaning = { kind: "vehicle" } | CustomMeaning;

/**
 * The vehicle item, its custom-value items (uniqueness claims moved; the extension type confirmed
 * by its lease) and its hub reference marker, in one transaction (shared/store/hub-references.ts).
 * Resolves to true when written, false when the vehicle item's own condition failed; a failed
 * custom-value item is its own error (409 ext-001), a missing hub the lease's 400.
 */
async function writeVehicle(
  vehicleItemWrite: (legacy: boolean) => TransactItem,
  custom: CustomValueItems,
  change: HubReferenceChange,
  previous?: { key: ItemKey; version: number },
): Promise<boolean> {
  const failed = await writeHubChild<VehicleMeaning>(
    change,
    (legacy) => [
      [vehicleItemWrite(legacy), { kind: "vehicle" }],
      ...custom.items.map((item, index): [TransactItem, VehicleMeaning] => [item, custom.meanings[index] as CustomMeaning]),
    ],
    {
      leases: custom.leases,
      ...(previous ? { previous: { ...previous, label: (meaning: VehicleMeaning) => meaning.kind === "vehicle" } } : {}),
    },
  );
  if (failed === undefined) return true;
  if (failed.some((meaning) => meaning.kind === "vehicle")) return false;
  throw (
    customValueFailure(
      "vehicle",
      failed.filter((meaning): meaning is CustomMeaning => meaning.kind !== "vehicle"),
    ) ?? concurrentUpdateError()
  );
}

export const dynamoVehicleStore: VehicleStore = {
  async insert(vehicle, custom?: CustomValuesWrite) {
    const key = keys.vehicle(vehicle.organizationId, vehicle._id);
    const written = await writeVehicle(
      () => put({ ...vehicleItem(vehicle, custom?.next), ...key, version: 1 }, { ConditionExpression: "attribute_not_exists(PK)" }),
      customValueItems(vehicle.organizationId, vehicle._id, undefined, custom),
      { organizationId: vehicle.organizationId, kind: "vehicle", childId: vehicle._id, to: vehicle.hubId },
    );
    // Ids are fresh ObjectIds; a collision means something is badly wrong, not a client mistake.
    if (!written) throw concurrentUpdateError();
  },

  async find(organizationId, vehicleId) {
    const found = await getVersioned<Record<string, unknown>>(keys.vehicle(organizationId, vehicleId));
    return found && parseVehicle(found.value, found.version);
  },

  /** Moving to another hub moves the reference marker in the same transaction. */
  async replace(vehicle, previous, custom?: CustomValuesWrite) {
    const key = keys.vehicle(vehicle.organizationId, vehicle._id);
    const written = await writeVehicle(
      (legacy) =>
        put(
          { ...vehicleItem(vehicle, custom?.next ?? previous.custom), ...key, version: previous.version + 1 },
          previousCondition(previous.version, legacy),
        ),
      customValueItems(vehicle.organizationId, vehicle._id, previous.custom, custom),
      { organizationId: vehicle.organizationId, kind: "vehicle", childId: vehicle._id, from: previous.vehicle.hubId, to: vehicle.hubId },
      { key, version: previous.version },
    );
    if (!written) throw await versionConflict(key);
  },

  /** Deleting the vehicle releases its custom values' uniqueness claims in the same transaction. */
  async remove(organizationId, vehicleId, previous) {
    const key = keys.vehicle(organizationId, vehicleId);
    return writeVehicle(
      (legacy) => remove(key, previousCondition(previous.version, legacy)),
      customValueItems(organizationId, vehicleId, previous.custom, previous.custom ? "delete" : undefined),
      { organizationId, kind: "vehicle", childId: vehicleId, from: previous.vehicle.hubId },
      { key, version: previous.version },
    );
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
