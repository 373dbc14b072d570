import { onDemandRuns } from "#shared/app/routing-result-commands";
import { httpHandler } from "#shared/http/handler";
import { answerIdempotently } from "#shared/http/idempotency";
import { created } from "#shared/http/responses";
import { routingResultRoutes } from "./routes.ts";

export const handler = httpHandler(
  routingResultRoutes.create,
  async ({ caller, body }) => created("Routing run has been queued.", await onDemandRuns.createOnDemand(caller, body)),
  { answerIdempotently },
);
