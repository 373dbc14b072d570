import { entityExtensionService } from "#shared/app/extensions";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { extensionRoutes } from "./routes.ts";

export const handler = httpHandler(extensionRoutes.replace, async ({ caller, params, body }) =>
  ok("Custom values have been saved successfully.", (await entityExtensionService.put(caller, params.entity, params.entityId, body)).view),
);
