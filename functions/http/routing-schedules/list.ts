import { scheduleService } from "#shared/app/schedules";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { scheduleRoutes } from "./routes.ts";

export const handler = httpHandler(scheduleRoutes.list, async ({ caller, query }) => {
  const page = await scheduleService.list(caller, query);
  return success(200, "Routing schedules found.", { data: page.items, nextCursor: page.nextCursor });
});
