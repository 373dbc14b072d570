import { liveRoutes } from "#shared/app/live-routes";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { vehicleRoutes } from "./routes.ts";

export const handler = httpHandler(vehicleRoutes.liveRoute, async ({ caller, params }) =>
  ok("Live route found.", await liveRoutes.routeOf(caller, params.vehicleId)),
);
