import { hubService } from "#shared/app/hubs";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { hubRoutes } from "./routes.ts";

export const handler = httpHandler(hubRoutes.list, async ({ caller, query }) => {
  const page = await hubService.list(caller, query);
  return success(200, "Hubs found.", { data: page.items, nextCursor: page.nextCursor });
});
