import { dataTypeService } from "#shared/app/data-types";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { dataTypeRoutes } from "./routes.ts";

export const handler = httpHandler(dataTypeRoutes.remove, async ({ caller, params, versions }) => {
  await dataTypeService.remove(caller, params.dataTypeId, versions);
  return success(200, "Data type has been deleted successfully.", {});
});
