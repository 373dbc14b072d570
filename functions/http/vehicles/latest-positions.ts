import { positionService } from "#shared/app/positions";
import { latestToGeoJson } from "#shared/domain/vehicles/positions";
import { httpHandler } from "#shared/http/handler";
import { documentResult, success } from "#shared/http/responses";
import { vehicleRoutes } from "./routes.ts";

export const handler = httpHandler(vehicleRoutes.latestPositions, async ({ caller, query }) => {
  const page = await positionService.latest(caller, query);
  return query.format === "geojson"
    ? documentResult("application/geo+json", JSON.stringify(latestToGeoJson(page)))
    : success(200, "Latest positions found.", { data: page.items, nextCursor: page.nextCursor });
});
