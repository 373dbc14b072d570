import { usageService } from "#shared/app/usage";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { usageRoutes } from "./routes.ts";

export const handler = httpHandler(usageRoutes.get, async ({ caller, query }) =>
  success(200, "Usage found.", { data: await usageService.report(caller, query) }),
);
