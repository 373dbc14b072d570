import { configurationService } from "#shared/app/configurations";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { configurationRoutes } from "./routes.ts";

export const handler = httpHandler(configurationRoutes.replace, async ({ caller, params, body, versions }) =>
  ok(
    "Configuration profile has been updated successfully.",
    await configurationService.replace(caller, params.configurationId, body, versions),
  ),
);
