import type { Caller } from "#shared/domain/caller";
import { createVisitBatch } from "#shared/domain/visits/batch";
import { createVisitService } from "#shared/domain/visits/service";
import { dynamoVehicleStore } from "#shared/store/vehicle-store";
import { dynamoVisitStore } from "#shared/store/visit-store";

/** Whose driver a visit's is: the assignee of its vehicle. */
export const visitVehicleAssignee = async (organizationId: string, vehicleId: string) =>
  (await dynamoVehicleStore.find(organizationId, vehicleId))?.vehicle.assignee;

/** Composition root of the visit area: the domain service over its DynamoDB store (vehicles: whose driver a visit's is). */
export const visitService = createVisitService(dynamoVisitStore, () => new Date(), visitVehicleAssignee);

/**
 * For routing runs (no caller): the hub's active (UNASSIGNED/ONGOING) visits, oldest first by
 * creation time, at most `max` (the spec's limit is 1,500), read from the sparse active index.
 */
export const oldestActiveVisits = (organizationId: string, hubId: string, max: number) =>
  dynamoVisitStore.oldestActive(organizationId, hubId, max);

/**
 * For dispatch (no caller): assign one visit (status ASSIGNED + vehicle, order, eta/etd, result id)
 * if it is still active in that hub; false when it was deleted or left the active statuses meanwhile.
 */
export const markVisitDispatched = dynamoVisitStore.markDispatched;

/** `POST /visits/batch`: each item created by the service's create, exactly as `POST /visit` does. */
export const createVisits = (caller: Caller, items: readonly unknown[]) => createVisitBatch(visitService.create, caller, items);
