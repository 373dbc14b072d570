import { visitService } from "#shared/app/visits";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { visitRoutes } from "./routes.ts";

export const handler = httpHandler(visitRoutes.list, async ({ caller, query }) => {
  const page = await visitService.list(caller, query);
  return success(200, "Visits found.", { data: page.items, nextCursor: page.nextCursor });
});
