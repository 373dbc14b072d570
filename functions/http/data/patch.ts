import { recordService } from "#shared/app/records";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { recordRoutes } from "./routes.ts";

export const handler = httpHandler(recordRoutes.patch, async ({ caller, params, query, body, versions }) =>
  ok("Data updated.", await recordService.patch(caller, params.dataTypeName, params.dataId, query.hubId, body, versions)),
);
