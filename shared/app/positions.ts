import { positionsReported } from "#shared/app/live-positions";
import { configuredPlans } from "#shared/config/tenant-plans";
import { reserveWithinCap } from "#shared/domain/usage/reservations";
import { planOf } from "#shared/domain/usage/run-quota";
import { createPositionService, type VehiclePosition } from "#shared/domain/vehicles/positions";
import { keys } from "#shared/store/keys";
import { dynamoPositionStore } from "#shared/store/position-store";
import { dynamoReservationStore } from "#shared/store/reservation-store";
import { tenantPlanName } from "#shared/store/usage-store";

/**
 * Composition root of vehicle positions: the domain service over its DynamoDB store, metered by the
 * plan's `positionSamplesPerMonth` through the one reservation mechanism (a vehicle reserves samples
 * in chunks on the month's counter, shared/domain/usage/reservations.ts); each report that moves a
 * vehicle's latest position then drives its live route (shared/app/live-positions.ts).
 */
export const positionService = createPositionService(
  dynamoPositionStore,
  async (organizationId, month, amount) => {
    const plan = planOf(await tenantPlanName(organizationId), configuredPlans());
    const counter = {
      key: keys.positionSamplesTotal(organizationId, month),
      attribute: "samples",
      itemAttributes: { entity: "positionSamples" },
    };
    const outcome = await reserveWithinCap(dynamoReservationStore, counter, amount, plan.positionSamplesPerMonth);
    return outcome.granted ? outcome : { ...outcome, cap: plan.positionSamplesPerMonth ?? 0, plan: plan.name };
  },
  () => new Date(),
  positionsReported,
);

/** Port for the live-ETA projection: the vehicle's latest reported position, or null (no caller: the projection checked access). */
export const latestPosition = (organizationId: string, vehicleId: string): Promise<VehiclePosition | null> =>
  dynamoPositionStore.latestOf(organizationId, [vehicleId]).then((latest) => latest.get(vehicleId) ?? null);
