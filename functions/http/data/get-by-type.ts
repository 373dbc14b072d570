import { recordService } from "#shared/app/records";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { recordRoutes } from "./routes.ts";

export const handler = httpHandler(recordRoutes.getByType, async ({ caller, params, query, versions }) =>
  ok("Data found.", await recordService.getByTypeName(caller, params.dataTypeName, params.dataId, query, versions)),
);
