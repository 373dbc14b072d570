import { visitService } from "#shared/app/visits";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { visitRoutes } from "./routes.ts";

export const handler = httpHandler(visitRoutes.patch, async ({ caller, params, body, versions }) =>
  ok("Visit has been updated successfully.", await visitService.patch(caller, params.visitId, body, versions)),
);
