import { dynamoConfigurationStore } from "#shared/store/configuration-store";
import { createLiveRoutes } from "#shared/domain/live/live-routes";
import { findLiveRoute, recordLiveProgress, visitsOfHubByIds } from "#shared/store/live-route-store";
import { dynamoVehicleStore } from "#shared/store/vehicle-store";

/**
 * Composition root of live routes and ETAs (GET /vehicle/{vehicleId}/route, and the re-projection after
 * each progress action). The latest position is the positions stream's to provide: none until it is wired.
 */
export const liveRoutes = createLiveRoutes({
  findLiveRoute,
  findVehicle: async (organizationId, vehicleId) => (await dynamoVehicleStore.find(organizationId, vehicleId))?.vehicle,
  findConfiguration: async (organizationId, configurationId) =>
    (await dynamoConfigurationStore.find(organizationId, configurationId))?.configuration,
  visitsOfHub: visitsOfHubByIds,
  latestPosition: async () => undefined,
  recordProgress: recordLiveProgress,
});
