import { webhookService } from "#shared/app/webhooks";
import { listDeliveries } from "#shared/store/webhook-delivery-store";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { webhookRoutes } from "./routes.ts";

export const handler = httpHandler(webhookRoutes.deliveries, async ({ caller, params, query }) => {
  // 404 for a webhook that is not the caller's organization's.
  await webhookService.get(caller, params.webhookId);
  const page = await listDeliveries(caller.organizationId, params.webhookId, query);
  return success(200, "Deliveries found.", { code: 200, data: page.items, nextCursor: page.nextCursor });
});
