import { positionService } from "#shared/app/positions";
import { trackToGeoJson } from "#shared/domain/vehicles/positions";
import { httpHandler } from "#shared/http/handler";
import { documentResult, success } from "#shared/http/responses";
import { vehicleRoutes } from "./routes.ts";

export const handler = httpHandler(vehicleRoutes.positions, async ({ caller, params, query }) => {
  const page = await positionService.history(caller, params.vehicleId, query);
  return query.format === "geojson"
    ? documentResult("application/geo+json", JSON.stringify(trackToGeoJson(params.vehicleId, page)))
    : success(200, "Positions found.", { data: page.items, nextCursor: page.nextCursor });
});
