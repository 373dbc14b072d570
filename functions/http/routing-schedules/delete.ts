import { scheduleService } from "#shared/app/schedules";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { scheduleRoutes } from "./routes.ts";

export const handler = httpHandler(scheduleRoutes.remove, async ({ caller, params, versions }) => {
  await scheduleService.remove(caller, params.scheduleId, versions);
  return success(200, "Routing schedule has been deleted successfully.", {});
});
