import { configurationService } from "#shared/app/configurations";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { configurationRoutes } from "./routes.ts";

export const handler = httpHandler(configurationRoutes.patch, async ({ caller, params, body, versions }) =>
  ok(
    "Configuration profile has been updated successfully.",
    await configurationService.patch(caller, params.configurationId, body, versions),
  ),
);
