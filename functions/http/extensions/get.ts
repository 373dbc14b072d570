import { entityExtensionService } from "#shared/app/extensions";
import { httpHandler } from "#shared/http/handler";
import { ok } from "#shared/http/responses";
import { extensionRoutes } from "./routes.ts";

export const handler = httpHandler(extensionRoutes.get, async ({ caller, params }) =>
  ok("Custom values found.", await entityExtensionService.get(caller, params.entity, params.entityId)),
);
