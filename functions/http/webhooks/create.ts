import { webhookService } from "#shared/app/webhooks";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { webhookRoutes } from "./routes.ts";

export const handler = httpHandler(webhookRoutes.create, async ({ caller, body }) =>
  success(201, "Webhook has been added successfully. Store its secret now: it is not shown again.", {
    code: 201,
    data: await webhookService.create(caller, body),
  }),
);
