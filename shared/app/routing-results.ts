import { loadResultMapInput } from "#shared/domain/routing-results/map-input";
import type { Caller } from "#shared/domain/caller";
import { createRoutingResultReads } from "#shared/domain/routing-results/service";
import { dynamoHubStore } from "#shared/store/hub-store";
import { dynamoRoutingResultStore } from "#shared/store/routing-result-store";
import { visitPositions } from "#shared/store/visit-store";

/** Composition root of reading one routing result (get, map); the list: routing-result-index.ts, on-demand runs: routing-result-commands.ts, dispatch: routing-result-dispatch.ts. */
export const routingResultReads = createRoutingResultReads(dynamoRoutingResultStore);

/** What the map and GeoJSON of a result are drawn from: the result, its hub and its unassigned visits' positions. */
export const resultMapInput = (caller: Caller, resultId: string) =>
  loadResultMapInput(
    {
      getResult: routingResultReads.get,
      findHub: async (organizationId, hubId) => (await dynamoHubStore.find(organizationId, hubId))?.hub,
      visitPositions,
    },
    caller,
    resultId,
  );
