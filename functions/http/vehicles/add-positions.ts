import { positionService } from "#shared/app/positions";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { vehicleRoutes } from "./routes.ts";

export const handler = httpHandler(vehicleRoutes.addPositions, async ({ caller, params, body }) =>
  success(202, "Positions have been recorded.", { data: await positionService.add(caller, params.vehicleId, body) }),
);
