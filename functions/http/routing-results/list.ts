import { routingResultIndex } from "#shared/app/routing-result-index";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { routingResultRoutes } from "./routes.ts";

export const handler = httpHandler(routingResultRoutes.list, async ({ caller, query }) => {
  const page = await routingResultIndex.list(caller, query);
  return success(200, "Routing results found.", { data: page.items, nextCursor: page.nextCursor });
});
