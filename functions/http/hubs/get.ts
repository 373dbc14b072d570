import { hubService } from "#shared/app/hubs";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { hubRoutes } from "./routes.ts";

export const handler = httpHandler(hubRoutes.get, async ({ caller, params, versions }) =>
  ok("Hub found.", await hubService.get(caller, params.hubId, versions)),
);
