import { webhookService } from "#shared/app/webhooks";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { webhookRoutes } from "./routes.ts";

export const handler = httpHandler(webhookRoutes.get, async ({ caller, params, versions }) =>
  success(200, "Webhook found.", { code: 200, data: await webhookService.get(caller, params.webhookId, versions) }),
);
