import { recordService } from "#shared/app/records";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { recordRoutes } from "./routes.ts";

export const handler = httpHandler(recordRoutes.getByDataId, async ({ caller, params, query, versions }) =>
  ok("Data found.", await recordService.getByDataId(caller, params.dataId, query, versions)),
);
