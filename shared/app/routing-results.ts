import { loadResultMapInput } from "#shared/domain/routing-results/map-input";
import { loadLiveMap } from "#shared/domain/routing-results/map-live";
import { dynamoConfigurationStore } from "#shared/store/configuration-store";
import { findLiveRoute, visitsOfHubByIds } from "#shared/store/live-route-store";
import { dynamoPositionStore } from "#shared/store/position-store";
import { dynamoVehicleStore } from "#shared/store/vehicle-store";
import type { Caller } from "#shared/domain/caller";
import { createRoutingResultReads } from "#shared/domain/routing-results/service";
import { dynamoHubStore } from "#shared/store/hub-store";
import { dynamoRoutingResultStore } from "#shared/store/routing-result-store";
import { visitPositions } from "#shared/store/visit-store";

/** Composition root of reading one routing result (get, map); the list: routing-result-index.ts, on-demand runs: routing-result-commands.ts, dispatch: routing-result-dispatch.ts. */
export const routingResultReads = createRoutingResultReads(dynamoRoutingResultStore);

/** What the map and GeoJSON of a result are drawn from: the result, its hub, its unassigned visits' positions and, dispatched, its day. */
export const resultMapInput = (caller: Caller, resultId: string) =>
  loadResultMapInput(
    {
      getResult: routingResultReads.get,
      findHub: async (organizationId, hubId) => (await dynamoHubStore.find(organizationId, hubId))?.hub,
      visitPositions,
      // A dispatched result's day: one live-route read per vehicle, one batch read of its visits and of the positions.
      liveDay: (organizationId, result) =>
        loadLiveMap(
          {
            findLiveRoute,
            findVehicle: async (org, vehicleId) => (await dynamoVehicleStore.find(org, vehicleId))?.vehicle,
            findConfiguration: async (org, configurationId) => (await dynamoConfigurationStore.find(org, configurationId))?.configuration,
            visitsOfHub: visitsOfHubByIds,
            latestPositions: (org, vehicleIds) => dynamoPositionStore.latestOf(org, [...vehicleIds]),
          },
          organizationId,
          result,
        ),
    },
    caller,
    resultId,
  );
