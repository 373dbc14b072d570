import { latestPosition } from "#shared/app/positions";
import { dynamoConfigurationStore } from "#shared/store/configuration-store";
import { createLiveRoutes } from "#shared/domain/live/live-routes";
import { findLiveRoute, recordLiveProgress, visitsOfHubByIds } from "#shared/store/live-route-store";
import { dynamoVehicleStore } from "#shared/store/vehicle-store";

/**
 * Composition root of live routes and ETAs (GET /vehicle/{vehicleId}/route, and the re-projection after
 * each progress action). A fresh latest position (POST /vehicle/{vehicleId}/positions) starts the projection.
 */
export const liveRoutes = createLiveRoutes({
  findLiveRoute,
  findVehicle: async (organizationId, vehicleId) => (await dynamoVehicleStore.find(organizationId, vehicleId))?.vehicle,
  findConfiguration: async (organizationId, configurationId) =>
    (await dynamoConfigurationStore.find(organizationId, configurationId))?.configuration,
  visitsOfHub: visitsOfHubByIds,
  latestPosition: async (organizationId, vehicleId) => {
    const latest = await latestPosition(organizationId, vehicleId);
    return latest ? { lat: latest.lat, lng: latest.lng, at: latest.at } : undefined;
  },
  recordProgress: recordLiveProgress,
});
