import { routingResultDispatch } from "#shared/app/routing-result-dispatch";
import { httpHandler } from "#shared/http/handler";
import { answerIdempotently } from "#shared/http/idempotency";
import { ok } from "#shared/http/responses";
import { routingResultRoutes } from "./routes.ts";

export const handler = httpHandler(
  routingResultRoutes.dispatch,
  async ({ caller, params, query }) =>
    ok("Routing result has been dispatched.", await routingResultDispatch.dispatch(caller, params.resultId, query)),
  { answerIdempotently },
);
