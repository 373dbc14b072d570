import { webhookService } from "#shared/app/webhooks";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { webhookRoutes } from "./routes.ts";

export const handler = httpHandler(webhookRoutes.list, async ({ caller, query }) => {
  const page = await webhookService.list(caller, query);
  return success(200, "Webhooks found.", { code: 200, data: page.items, nextCursor: page.nextCursor });
});
