import { onDemandRuns } from "#shared/app/routing-result-commands";
import { httpHandler } from "#shared/http/handler";
import { answerIdempotently } from "#shared/http/idempotency";
import { created } from "#shared/http/responses";
import { routingResultRoutes } from "./routes.ts";

export const handler = httpHandler(
  routingResultRoutes.reoptimize,
  async ({ caller, params, body }) =>
    created("Re-optimization has been queued.", await onDemandRuns.reoptimize(caller, params.resultId, body)),
  { answerIdempotently },
);
