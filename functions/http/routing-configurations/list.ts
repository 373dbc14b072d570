import { configurationService } from "#shared/app/configurations";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { configurationRoutes } from "./routes.ts";

export const handler = httpHandler(configurationRoutes.list, async ({ caller, query }) => {
  const page = await configurationService.list(caller, query);
  return success(200, "Configuration profiles found.", { data: page.items, nextCursor: page.nextCursor });
});
