import { configurationService } from "#shared/app/configurations";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { configurationRoutes } from "./routes.ts";

export const handler = httpHandler(configurationRoutes.get, async ({ caller, params, versions }) =>
  ok("Configuration profile found.", await configurationService.get(caller, params.configurationId, versions)),
);
