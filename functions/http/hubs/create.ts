import { hubService } from "#shared/app/hubs";
import { httpHandler } from "#shared/http/handler";
import { answerIdempotently } from "#shared/http/idempotency";
import { created } from "#shared/http/responses";
import { hubRoutes } from "./routes.ts";

export const handler = httpHandler(
  hubRoutes.create,
  async ({ caller, body }) => created("Hub has been added successfully.", await hubService.create(caller, body)),
  { answerIdempotently },
);
