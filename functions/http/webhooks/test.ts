import { sendTestEvent } from "#shared/app/webhook-events";
import { webhookService } from "#shared/app/webhooks";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { webhookRoutes } from "./routes.ts";

export const handler = httpHandler(webhookRoutes.test, async ({ caller, params }) => {
  // 404 for a webhook that is not the caller's organization's.
  await webhookService.get(caller, params.webhookId);
  return success(202, "Test event queued.", { code: 202, data: await sendTestEvent(caller.organizationId, params.webhookId) });
});
