import { vehicleService } from "#shared/app/vehicles";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { vehicleRoutes } from "./routes.ts";

export const handler = httpHandler(vehicleRoutes.get, async ({ caller, params, versions }) =>
  ok("Vehicle found.", await vehicleService.get(caller, params.vehicleId, versions)),
);
