import { hubService } from "#shared/app/hubs";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { hubRoutes } from "./routes.ts";

export const handler = httpHandler(hubRoutes.remove, async ({ caller, params, versions }) => {
  await hubService.remove(caller, params.hubId, versions);
  return success(200, "Hub has been deleted successfully.", {});
});
