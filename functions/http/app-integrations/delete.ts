import { appIntegrationService } from "#shared/app/app-integrations";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { appIntegrationRoutes } from "./routes.ts";

export const handler = httpHandler(appIntegrationRoutes.remove, async ({ caller, params, versions }) => {
  await appIntegrationService.remove(caller, params.appIntegrationId, versions);
  return success(200, "Integration has been deleted successfully.", { code: 200 });
});
