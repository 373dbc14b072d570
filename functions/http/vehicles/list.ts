import { vehicleService } from "#shared/app/vehicles";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { vehicleRoutes } from "./routes.ts";

export const handler = httpHandler(vehicleRoutes.list, async ({ caller, query }) => {
  const page = await vehicleService.list(caller, query);
  return success(200, "Vehicles found.", { data: page.items, nextCursor: page.nextCursor });
});
