import { recordService } from "#shared/app/records";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { recordRoutes } from "./routes.ts";

export const handler = httpHandler(recordRoutes.replace, async ({ caller, params, query, body, versions }) =>
  ok("Data updated.", await recordService.replace(caller, params.dataTypeName, params.dataId, query.hubId, body, versions)),
);
