import { configurationService } from "#shared/app/configurations";
import { httpHandler } from "#shared/http/handler";
import { answerIdempotently } from "#shared/http/idempotency";
import { created } from "#shared/http/responses";
import { configurationRoutes } from "./routes.ts";

export const handler = httpHandler(
  configurationRoutes.create,
  async ({ caller, body }) =>
    created("Configuration profile has been added successfully.", await configurationService.create(caller, body)),
  { answerIdempotently },
);
