import { vehicleService } from "#shared/app/vehicles";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { vehicleRoutes } from "./routes.ts";

export const handler = httpHandler(vehicleRoutes.patch, async ({ caller, params, body, versions }) =>
  ok("Vehicle has been updated successfully.", await vehicleService.patch(caller, params.vehicleId, body, versions)),
);
