import { vehicleService } from "#shared/app/vehicles";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { vehicleRoutes } from "./routes.ts";

export const handler = httpHandler(vehicleRoutes.remove, async ({ caller, params, versions }) => {
  await vehicleService.remove(caller, params.vehicleId, versions);
  return success(200, "Vehicle has been deleted successfully.", {});
});
