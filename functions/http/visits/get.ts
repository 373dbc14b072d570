import { visitService } from "#shared/app/visits";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { visitRoutes } from "./routes.ts";

export const handler = httpHandler(visitRoutes.get, async ({ caller, params, versions }) =>
  ok("Visit found.", await visitService.get(caller, params.visitId, versions)),
);
