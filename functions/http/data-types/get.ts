import { dataTypeService } from "#shared/app/data-types";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { dataTypeRoutes } from "./routes.ts";

export const handler = httpHandler(dataTypeRoutes.get, async ({ caller, params, versions }) =>
  success(200, "Data type found.", { data_type: await dataTypeService.get(caller, params.dataTypeId, versions) }),
);
