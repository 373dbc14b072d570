import { recordService } from "#shared/app/records";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { recordRoutes } from "./routes.ts";

export const handler = httpHandler(recordRoutes.list, async ({ caller, query }) => {
  const page = await recordService.list(caller, query);
  return success(200, "Data found.", { data: page.items, nextCursor: page.nextCursor });
});
