import { markVisitDispatched } from "#shared/app/visits";
import { createRoutingResultDispatch } from "#shared/domain/routing-results/service";
import { dynamoRoutingResultStore } from "#shared/store/routing-result-store";
import { returnVisitToPool, visitRoutingResultId } from "#shared/store/visit-store";
import { recordLiveRoutes } from "#shared/store/live-route-store";

/** Composition root of `POST /routing/result/{resultId}/dispatch`: the result with its body (S3) and the visits it marks. */
export const routingResultDispatch = createRoutingResultDispatch({
  store: dynamoRoutingResultStore,
  markVisitDispatched,
  visitRoutingResultId,
  recordLiveRoutes,
  returnVisitToPool,
});
