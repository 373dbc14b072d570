import { hubService } from "#shared/app/hubs";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { hubRoutes } from "./routes.ts";

export const handler = httpHandler(hubRoutes.patch, async ({ caller, params, body, versions }) =>
  ok("Hub has been updated successfully.", await hubService.patch(caller, params.hubId, body, versions)),
);
