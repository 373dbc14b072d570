import { visitService } from "#shared/app/visits";
import { httpHandler } from "#shared/http/handler";
import { answerIdempotently } from "#shared/http/idempotency";
import { created } from "#shared/http/responses";
import { visitRoutes } from "./routes.ts";

export const handler = httpHandler(
  visitRoutes.create,
  async ({ caller, body }) => created("Visit has been added successfully.", await visitService.create(caller, body)),
  { answerIdempotently },
);
