import { NotFoundError, ValidationError } from "#shared/domain/errors";
import { newId } from "#shared/domain/ids";
import { formatDateTimeUtc } from "#shared/domain/time";
import { type Caller, callerMayUseHub } from "#shared/domain/caller";
import { parseWith } from "#shared/domain/validation";
import { type VersionCondition, writeUnder } from "#shared/domain/versions";
import type { CustomValues, CustomValuesWrite, CustomWriteMode, ExtensionType } from "#shared/domain/extensions/service";
import type { StoredCustomValues } from "#shared/domain/extensions/schema";
import {
  type Vehicle,
  type VehicleInput,
  vehicleInputSchema,
  type VehiclePatch,
  type VehicleView,
  writableVehicleFields,
} from "#shared/domain/vehicles/schema";

/** A stored vehicle with the custom values its item holds (docs/api/extensions.md). */
export interface StoredVehicle {
  vehicle: Vehicle;
  version: number;
  custom?: StoredCustomValues | undefined;
}

export interface VehiclePage {
  items: StoredVehicle[];
  nextCursor: string | null;
}

export interface VehicleListFilter {
  hubId?: string | undefined;
  tag?: string | undefined;
  /** When the caller is restricted to hubs, only these hubs are listed. */
  allowedHubIds: string[];
  limit: number;
  cursor?: string | undefined;
}

/** Persistence port of the vehicle domain (implemented over DynamoDB in shared/store/vehicle-store.ts). */
export interface VehicleStore {
  /** `custom`: the checked custom values to store (their uniqueness claims taken in the same transaction). */
  insert(vehicle: Vehicle, custom?: CustomValuesWrite | undefined): Promise<void>;
  find(organizationId: string, vehicleId: string): Promise<StoredVehicle | undefined>;
  /**
   * Inserts, replaces and removes also keep the hub's reference count (shared/store/hub-store.ts):
   * a vehicle can only name an existing hub of its organization (400 on hubId otherwise), and a
   * hub cannot be deleted while a vehicle names it. `custom` undefined keeps the stored custom values;
   * a remove releases their uniqueness claims.
   */
  replace(vehicle: Vehicle, previous: StoredVehicle, custom?: CustomValuesWrite | undefined): Promise<void>;
  remove(organizationId: string, vehicleId: string, previous: StoredVehicle): Promise<boolean>;
  list(organizationId: string, filter: VehicleListFilter): Promise<VehiclePage>;
}

function assertHubAllowed(caller: Caller, hubId: string): void {
  if (!callerMayUseHub(caller, hubId)) {
    throw ValidationError.single("hubId", "hubId must be one of the hubs your token allows");
  }
}

/**
 * Vehicles. `custom` (docs/api/extensions.md) is checked by the organization's vehicle extension data
 * type through `custom` (the records' value rules) and stored on the vehicle item in the same
 * transaction as its uniqueness claims.
 */
export function createVehicleService(store: VehicleStore, custom: CustomValues, now: () => Date = () => new Date()) {
  /** A vehicle of another organization, or of a hub the caller may not use, does not exist for this caller. */
  async function findVisible(caller: Caller, vehicleId: string) {
    const found = await store.find(caller.organizationId, vehicleId);
    if (!found || !callerMayUseHub(caller, found.vehicle.hubId)) throw new NotFoundError();
    return found;
  }

  const toView = (
    caller: Caller,
    type: ExtensionType | undefined,
    vehicle: Vehicle,
    stored: StoredCustomValues | undefined,
  ): VehicleView => {
    const shown = custom.view(caller, type, stored);
    return shown === undefined ? vehicle : { ...vehicle, custom: shown };
  };

  async function write(
    caller: Caller,
    existing: StoredVehicle,
    input: VehicleInput,
    mode: CustomWriteMode,
    versions?: VersionCondition,
  ): Promise<VehicleView> {
    const { custom: sentCustom, ...fields } = input;
    assertHubAllowed(caller, fields.hubId);
    const type = await custom.typeFor(caller.organizationId, "vehicle");
    const customWrite = await custom.prepare(caller, "vehicle", type, existing.custom, sentCustom, mode);
    const vehicle: Vehicle = {
      ...fields,
      _id: existing.vehicle._id,
      organizationId: caller.organizationId,
      createdTime: existing.vehicle.createdTime,
      updatedTime: formatDateTimeUtc(now()),
    };
    await writeUnder(versions, () => store.replace(vehicle, existing, customWrite), existing.version + 1);
    return toView(caller, type, vehicle, customWrite?.next ?? existing.custom);
  }

  return {
    async create(caller: Caller, input: VehicleInput): Promise<VehicleView> {
      const { custom: sentCustom, ...fields } = input;
      assertHubAllowed(caller, fields.hubId);
      const type = await custom.typeFor(caller.organizationId, "vehicle");
      const customWrite = await custom.prepare(caller, "vehicle", type, undefined, sentCustom, "create");
      const time = now();
      const vehicle: Vehicle = {
        _id: newId(time),
        ...fields,
        organizationId: caller.organizationId,
        createdTime: formatDateTimeUtc(time),
        updatedTime: formatDateTimeUtc(time),
      };
      await store.insert(vehicle, customWrite);
      return toView(caller, type, vehicle, customWrite?.next);
    },

    async get(caller: Caller, vehicleId: string, versions?: VersionCondition): Promise<VehicleView> {
      // The vehicle's read and the extension guard's are both eventually consistent: 0.5 RRU each.
      const [found, type] = await Promise.all([
        findVisible(caller, vehicleId),
        custom.typeFor(caller.organizationId, "vehicle", { consistent: false }),
      ]);
      versions?.check(found.version);
      return toView(caller, type, found.vehicle, found.custom);
    },

    async replace(caller: Caller, vehicleId: string, input: VehicleInput, versions?: VersionCondition): Promise<VehicleView> {
      const existing = await findVisible(caller, vehicleId);
      versions?.check(existing.version);
      return write(caller, existing, input, "replace", versions);
    },

    /** Merges the patch over the stored vehicle and validates the result as a whole vehicle. */
    async patch(caller: Caller, vehicleId: string, patch: VehiclePatch, versions?: VersionCondition): Promise<VehicleView> {
      const existing = await findVisible(caller, vehicleId);
      versions?.check(existing.version);
      const current = Object.fromEntries(writableVehicleFields.map((field) => [field, existing.vehicle[field]]));
      const merged = parseWith(vehicleInputSchema, { ...current, ...patch });
      return write(caller, existing, merged, "patch", versions);
    },

    async remove(caller: Caller, vehicleId: string, versions?: VersionCondition): Promise<void> {
      const existing = await findVisible(caller, vehicleId);
      versions?.check(existing.version);
      const removed = await writeUnder(versions, () => store.remove(caller.organizationId, vehicleId, existing));
      if (!removed) throw new NotFoundError();
    },

    async list(
      caller: Caller,
      query: { hubId?: string | undefined; tag?: string | undefined; limit: number; cursor?: string | undefined },
    ) {
      if (query.hubId !== undefined) assertHubAllowed(caller, query.hubId);
      const [page, type] = await Promise.all([
        store.list(caller.organizationId, { ...query, allowedHubIds: caller.hubIds }),
        custom.typeFor(caller.organizationId, "vehicle", { consistent: false }),
      ]);
      return { items: page.items.map((item) => toView(caller, type, item.vehicle, item.custom)), nextCursor: page.nextCursor };
    },
  };
}

export type VehicleService = ReturnType<typeof createVehicleService>;
