import { webhookService } from "#shared/app/webhooks";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { webhookRoutes } from "./routes.ts";

export const handler = httpHandler(webhookRoutes.patch, async ({ caller, params, body, versions }) =>
  success(200, "Webhook has been updated successfully.", {
    code: 200,
    data: await webhookService.patch(caller, params.webhookId, body, versions),
  }),
);
