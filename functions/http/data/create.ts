import { recordService } from "#shared/app/records";
import { httpHandler } from "#shared/http/handler";
import { answerIdempotently } from "#shared/http/idempotency";
import { created } from "#shared/http/responses";
import { recordRoutes } from "./routes.ts";

export const handler = httpHandler(
  recordRoutes.create,
  async ({ caller, body }) => created("Data created.", await recordService.create(caller, body)),
  { answerIdempotently },
);
