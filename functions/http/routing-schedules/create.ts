import { scheduleService } from "#shared/app/schedules";
import { httpHandler } from "#shared/http/handler";
import { answerIdempotently } from "#shared/http/idempotency";
import { created } from "#shared/http/responses";
import { scheduleRoutes } from "./routes.ts";

export const handler = httpHandler(
  scheduleRoutes.create,
  async ({ caller, body }) => created("Routing schedule has been added successfully.", await scheduleService.create(caller, body)),
  { answerIdempotently },
);
