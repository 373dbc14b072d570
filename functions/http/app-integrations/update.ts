import { appIntegrationService } from "#shared/app/app-integrations";
import { httpHandler } from "#shared/http/handler";
import { parseMultipartBody } from "#shared/http/multipart";
import { success } from "#shared/http/responses";
import { appIntegrationRoutes } from "./routes.ts";

export const handler = httpHandler(
  appIntegrationRoutes.update,
  async ({ caller, params, body, versions }) =>
    success(200, "Integration has been updated successfully.", {
      code: 200,
      data: await appIntegrationService.update(caller, params.appIntegrationId, body, versions),
    }),
  { readMultipart: parseMultipartBody },
);
