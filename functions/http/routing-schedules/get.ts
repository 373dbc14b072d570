import { scheduleService } from "#shared/app/schedules";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { scheduleRoutes } from "./routes.ts";

export const handler = httpHandler(scheduleRoutes.get, async ({ caller, params, versions }) =>
  ok("Routing schedule found.", await scheduleService.get(caller, params.scheduleId, versions)),
);
