import { visitService } from "#shared/app/visits";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { visitRoutes } from "./routes.ts";

export const handler = httpHandler(visitRoutes.history, async ({ caller, params, query }) => {
  const page = await visitService.history(caller, params.visitId, query);
  return success(200, "Visit history found.", { data: page.items, nextCursor: page.nextCursor });
});
