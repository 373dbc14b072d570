import { vehicleService } from "#shared/app/vehicles";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { vehicleRoutes } from "./routes.ts";

export const handler = httpHandler(vehicleRoutes.replace, async ({ caller, params, body, versions }) =>
  ok("Vehicle has been updated successfully.", await vehicleService.replace(caller, params.vehicleId, body, versions)),
);
