import { resultMapInput, routingResultReads } from "#shared/app/routing-results";
import { resultToGeoJson } from "#shared/domain/routing-results/geojson";
import { httpHandler } from "#shared/http/handler";
import { documentResult, ok } from "#shared/http/responses";
import { routingResultRoutes } from "./routes.ts";

export const handler = httpHandler(routingResultRoutes.get, async ({ caller, params, query }) =>
  query.format === "geojson"
    ? documentResult("application/geo+json", JSON.stringify(resultToGeoJson(await resultMapInput(caller, params.resultId))))
    : ok("Routing result found.", await routingResultReads.get(caller, params.resultId)),
);
