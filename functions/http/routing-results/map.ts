import { resultMapInput } from "#shared/app/routing-results";
import { resultToSvg } from "#shared/domain/routing-results/map-svg";
import { httpHandler } from "#shared/http/handler";
import { documentResult } from "#shared/http/responses";
import { routingResultRoutes } from "./routes.ts";

export const handler = httpHandler(routingResultRoutes.map, async ({ caller, params }) =>
  documentResult("image/svg+xml", resultToSvg(await resultMapInput(caller, params.resultId)), {
    "x-content-type-options": "nosniff",
    // Opened on its own, the picture may run nothing and load nothing (it has no script and no link).
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
  }),
);
