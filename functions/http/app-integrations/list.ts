import { appIntegrationService } from "#shared/app/app-integrations";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { appIntegrationRoutes } from "./routes.ts";

export const handler = httpHandler(appIntegrationRoutes.list, async ({ caller, query }) => {
  const page = await appIntegrationService.list(caller, query);
  return success(200, "Integrations found.", { code: 200, data: page.items, nextCursor: page.nextCursor });
});
