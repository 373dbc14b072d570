import { appIntegrationService } from "#shared/app/app-integrations";
import { httpHandler } from "#shared/http/handler";
import { answerIdempotently } from "#shared/http/idempotency";
import { parseMultipartBody } from "#shared/http/multipart";
import { success } from "#shared/http/responses";
import { appIntegrationRoutes } from "./routes.ts";

export const handler = httpHandler(appIntegrationRoutes.create, async ({ caller, body }) =>
  success(201, "Integration has been added successfully.", { code: 201, data: await appIntegrationService.create(caller, body) }),
  { readMultipart: parseMultipartBody, answerIdempotently },
);
