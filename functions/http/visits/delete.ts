import { visitService } from "#shared/app/visits";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { visitRoutes } from "./routes.ts";

export const handler = httpHandler(visitRoutes.remove, async ({ caller, params, versions }) => {
  await visitService.remove(caller, params.visitId, versions);
  return success(200, "Visit has been deleted successfully.", {});
});
