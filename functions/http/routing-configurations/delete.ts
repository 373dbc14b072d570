import { configurationService } from "#shared/app/configurations";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { configurationRoutes } from "./routes.ts";

export const handler = httpHandler(configurationRoutes.remove, async ({ caller, params, versions }) => {
  await configurationService.remove(caller, params.configurationId, versions);
  return success(200, "Configuration profile has been deleted successfully.", {});
});
