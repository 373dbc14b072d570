import { appIntegrationService } from "#shared/app/app-integrations";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { appIntegrationRoutes } from "./routes.ts";

export const handler = httpHandler(appIntegrationRoutes.get, async ({ caller, params, versions }) =>
  success(200, "Integration found.", { code: 200, data: await appIntegrationService.get(caller, params.appIntegrationId, versions) }),
);
