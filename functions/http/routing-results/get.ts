import { routingResultService } from "#shared/app/routing-results";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { routingResultRoutes } from "./routes.ts";

export const handler = httpHandler(routingResultRoutes.get, async ({ caller, params }) =>
  ok("Routing result found.", await routingResultService.get(caller, params.resultId)),
);
