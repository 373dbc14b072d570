import { scheduleService } from "#shared/app/schedules";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { scheduleRoutes } from "./routes.ts";

export const handler = httpHandler(scheduleRoutes.replace, async ({ caller, params, body, versions }) =>
  ok("Routing schedule has been updated successfully.", await scheduleService.replace(caller, params.scheduleId, body, versions)),
);
