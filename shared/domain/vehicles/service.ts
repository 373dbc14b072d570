import { NotFoundError, ValidationError } from "#shared/domain/errors";
import { newId } from "#shared/domain/ids";
import { formatDateTimeUtc } from "#shared/domain/time";
import { type Caller, callerMayUseHub } from "#shared/domain/caller";
import { parseWith } from "#shared/domain/validation";
import { type VersionCondition, writeUnder } from "#shared/domain/versions";
import {
  type Vehicle,
  type VehicleInput,
  vehicleInputSchema,
  type VehiclePatch,
} from "#shared/domain/vehicles/schema";

export interface VehiclePage {
  items: Vehicle[];
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
  insert(vehicle: Vehicle): Promise<void>;
  find(organizationId: string, vehicleId: string): Promise<{ vehicle: Vehicle; version: number } | undefined>;
  /**
   * Inserts, replaces and removes also keep the hub's reference count (shared/store/hub-store.ts):
   * a vehicle can only name an existing hub of its organization (400 on hubId otherwise), and a
   * hub cannot be deleted while a vehicle names it.
   */
  replace(vehicle: Vehicle, previous: { version: number; hubId: string }): Promise<void>;
  remove(organizationId: string, vehicleId: string, previous: { version: number; hubId: string }): Promise<boolean>;
  list(organizationId: string, filter: VehicleListFilter): Promise<VehiclePage>;
}

const writableFields = [
  "name",
  "type",
  "plateNumber",
  "hubId",
  "assignee",
  "capacity",
  "speed",
  "workingTime",
  "breakTime",
  "tags",
  "fixedCost",
  "startLocation",
  "endLocation",
  "constraints",
] as const satisfies ReadonlyArray<keyof VehicleInput>;

function assertHubAllowed(caller: Caller, hubId: string): void {
  if (!callerMayUseHub(caller, hubId)) {
    throw ValidationError.single("hubId", "hubId must be one of the hubs your token allows");
  }
}

export function createVehicleService(store: VehicleStore, now: () => Date = () => new Date()) {
  /** A vehicle of another organization, or of a hub the caller may not use, does not exist for this caller. */
  async function findVisible(caller: Caller, vehicleId: string) {
    const found = await store.find(caller.organizationId, vehicleId);
    if (!found || !callerMayUseHub(caller, found.vehicle.hubId)) throw new NotFoundError();
    return found;
  }

  async function write(caller: Caller, existing: { vehicle: Vehicle; version: number }, input: VehicleInput, versions?: VersionCondition): Promise<Vehicle> {
    assertHubAllowed(caller, input.hubId);
    const vehicle: Vehicle = {
      ...input,
      _id: existing.vehicle._id,
      organizationId: caller.organizationId,
      createdTime: existing.vehicle.createdTime,
      updatedTime: formatDateTimeUtc(now()),
    };
    await writeUnder(versions, () => store.replace(vehicle, { version: existing.version, hubId: existing.vehicle.hubId }), existing.version + 1);
    return vehicle;
  }

  return {
    async create(caller: Caller, input: VehicleInput): Promise<Vehicle> {
      assertHubAllowed(caller, input.hubId);
      const time = now();
      const vehicle: Vehicle = {
        _id: newId(time),
        ...input,
        organizationId: caller.organizationId,
        createdTime: formatDateTimeUtc(time),
        updatedTime: formatDateTimeUtc(time),
      };
      await store.insert(vehicle);
      return vehicle;
    },

    async get(caller: Caller, vehicleId: string, versions?: VersionCondition): Promise<Vehicle> {
      const found = await findVisible(caller, vehicleId);
      versions?.check(found.version);
      return found.vehicle;
    },

    async replace(caller: Caller, vehicleId: string, input: VehicleInput, versions?: VersionCondition): Promise<Vehicle> {
      const existing = await findVisible(caller, vehicleId);
      versions?.check(existing.version);
      return write(caller, existing, input, versions);
    },

    /** Merges the patch over the stored vehicle and validates the result as a whole vehicle. */
    async patch(caller: Caller, vehicleId: string, patch: VehiclePatch, versions?: VersionCondition): Promise<Vehicle> {
      const existing = await findVisible(caller, vehicleId);
      versions?.check(existing.version);
      const current = Object.fromEntries(writableFields.map((field) => [field, existing.vehicle[field]]));
      const merged = parseWith(vehicleInputSchema, { ...current, ...patch });
      return write(caller, existing, merged, versions);
    },

    async remove(caller: Caller, vehicleId: string, versions?: VersionCondition): Promise<void> {
      const existing = await findVisible(caller, vehicleId);
      versions?.check(existing.version);
      const removed = await writeUnder(versions, () => store.remove(caller.organizationId, vehicleId, { version: existing.version, hubId: existing.vehicle.hubId }));
      if (!removed) throw new NotFoundError();
    },

    async list(caller: Caller, query: { hubId?: string | undefined; tag?: string | undefined; limit: number; cursor?: string | undefined }): Promise<VehiclePage> {
      if (query.hubId !== undefined) assertHubAllowed(caller, query.hubId);
      return store.list(caller.organizationId, { ...query, allowedHubIds: caller.hubIds });
    },
  };
}

export type VehicleService = ReturnType<typeof createVehicleService>;
