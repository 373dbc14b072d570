import { liveRoutePorts } from "#shared/app/live-routes";
import { visitService } from "#shared/app/visits";
import type { PositionsReported } from "#shared/domain/vehicles/positions";
import { createLiveRoutes } from "#shared/domain/live/live-routes";
import { logger } from "#shared/observability/powertools";

/** Live routes with the visits' geofence arrive wired in (kept apart: shared/app/visits itself uses live routes). */
const livePositions = createLiveRoutes({
  ...liveRoutePorts,
  arriveByGeofence: async (organizationId, visitId, vehicleId, how) =>
    (await visitService.arriveByGeofence(organizationId, visitId, vehicleId, how)) !== undefined,
});

/**
 * After a position report moved a vehicle's latest position: geofence arrival and the live route's
 * refresh (docs/api/execution.md, "Refresh on positions"), inline in the report. The samples are stored
 * already: a failure is logged, and the next report tries again.
 */
export const positionsReported: PositionsReported = async (caller, vehicle, report) => {
  try {
    await livePositions.positionsReported(caller.organizationId, vehicle.vehicleId, caller.userId, report);
  } catch (error) {
    logger.warn("live refresh on positions failed", {
      vehicleId: vehicle.vehicleId,
      error: error instanceof Error ? error.message : String(error),
    });
  }
};
