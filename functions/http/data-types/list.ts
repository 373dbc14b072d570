import { dataTypeService } from "#shared/app/data-types";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { dataTypeRoutes } from "./routes.ts";

export const handler = httpHandler(dataTypeRoutes.list, async ({ caller, query }) => {
  const page = await dataTypeService.list(caller, query);
  return success(200, "Data types found.", { data_types: page.items, nextCursor: page.nextCursor });
});
