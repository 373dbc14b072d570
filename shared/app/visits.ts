import type { Caller } from "#shared/domain/caller";
import { createVisitBatch } from "#shared/domain/visits/batch";
import { createVisitService, type ProgressRecorded } from "#shared/domain/visits/service";
import { dynamoVehicleStore } from "#shared/store/vehicle-store";
import { dynamoVisitStore } from "#shared/store/visit-store";
import { liveRoutes } from "#shared/app/live-routes";
import { logger } from "#shared/observability/powertools";

/** Whose driver a visit's is: the assignee of its vehicle. */
export const visitVehicleAssignee = async (organizationId: string, vehicleId: string) =>
  (await dynamoVehicleStore.find(organizationId, vehicleId))?.vehicle.assignee;

/**
 * After a progress action is stored: re-project the vehicle's live route (ETAs, risk, their events).
 * The action is recorded already: a failed re-projection is logged, and the next action projects again.
 */
export const refreshLiveRoute: ProgressRecorded = async (organizationId, visit, action, at) => {
  try {
    await liveRoutes.progressRecorded(organizationId, visit, action, at);
  } catch (error) {
    logger.warn("live ETA refresh failed", { visitId: visit._id, action, error: error instanceof Error ? error.message : String(error) });
  }
};

/** Composition root of the visit area: the domain service over its DynamoDB store (vehicles: whose driver a visit's is). */
export const visitService = createVisitService(dynamoVisitStore, () => new Date(), visitVehicleAssignee, refreshLiveRoute);

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

/** The stream consumer: dispatches appended to their visits' histories (shared/domain/visits/dispatch-history.ts). */
export { recordDispatchHistory } from "#shared/store/visit-store";

/** `POST /visits/batch`: each item created by the service's create, exactly as `POST /visit` does. */
export const createVisits = (caller: Caller, items: readonly unknown[]) => createVisitBatch(visitService.create, caller, items);
