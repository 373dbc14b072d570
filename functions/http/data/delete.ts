import { recordService } from "#shared/app/records";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { recordRoutes } from "./routes.ts";

export const handler = httpHandler(recordRoutes.remove, async ({ caller, params, query, versions }) => {
  await recordService.remove(caller, params.dataTypeName, params.dataId, query.hubId, versions);
  return success(200, "Data deleted.", {});
});
