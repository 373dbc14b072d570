import { webhookService } from "#shared/app/webhooks";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { webhookRoutes } from "./routes.ts";

export const handler = httpHandler(webhookRoutes.remove, async ({ caller, params, versions }) => {
  await webhookService.remove(caller, params.webhookId, versions);
  return success(200, "Webhook has been deleted successfully.", { code: 200 });
});
