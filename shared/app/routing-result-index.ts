import { createRoutingResultIndex } from "#shared/domain/routing-results/service";
import { dynamoRoutingResultItems } from "#shared/store/routing-result-items";

/** Composition root of `GET /routing/results`: the result items only, so the list function does not carry the S3 client the bodies need. */
export const routingResultIndex = createRoutingResultIndex(dynamoRoutingResultItems);
