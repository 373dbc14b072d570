import { dynamoConfigurationStore } from "#shared/store/configuration-store";
import { createLiveRoutes, type LiveRoutePorts } from "#shared/domain/live/live-routes";
import { findLiveRoute, recordLiveProgress, visitsOfHubByIds } from "#shared/store/live-route-store";
import { dynamoPositionStore } from "#shared/store/position-store";
import { dynamoVehicleStore } from "#shared/store/vehicle-store";

/**
 * Composition root of live routes and ETAs (GET /vehicle/{vehicleId}/route, and the re-projection after
 * each progress action). A fresh latest position (POST /vehicle/{vehicleId}/positions) starts the projection.
 * The positions' side (geofence arrival, refresh on positions) is shared/app/live-positions.ts, which adds
 * the visits' arrive to these ports.
 */
export const liveRoutePorts: LiveRoutePorts = {
  findLiveRoute,
  findVehicle: async (organizationId, vehicleId) => (await dynamoVehicleStore.find(organizationId, vehicleId))?.vehicle,
  findConfiguration: async (organizationId, configurationId) =>
    (await dynamoConfigurationStore.find(organizationId, configurationId))?.configuration,
  visitsOfHub: visitsOfHubByIds,
  latestPosition: async (organizationId, vehicleId) => {
    const latest = (await dynamoPositionStore.latestOf(organizationId, [vehicleId])).get(vehicleId);
    return latest ? { lat: latest.lat, lng: latest.lng, at: latest.at } : undefined;
  },
  recordProgress: recordLiveProgress,
};

export const liveRoutes = createLiveRoutes(liveRoutePorts);
