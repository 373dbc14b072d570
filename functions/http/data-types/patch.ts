import { dataTypeService } from "#shared/app/data-types";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { dataTypeRoutes } from "./routes.ts";

export const handler = httpHandler(dataTypeRoutes.patch, async ({ caller, params, body, versions }) =>
  success(200, "Data type has been updated successfully.", {
    data_type: await dataTypeService.patch(caller, params.dataTypeId, body, versions),
  }),
);
