import { hubService } from "#shared/app/hubs";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { hubRoutes } from "./routes.ts";

export const handler = httpHandler(hubRoutes.replace, async ({ caller, params, body, versions }) =>
  ok("Hub has been updated successfully.", await hubService.replace(caller, params.hubId, body, versions)),
);
