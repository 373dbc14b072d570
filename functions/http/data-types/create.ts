import { dataTypeService } from "#shared/app/data-types";
import { httpHandler } from "#shared/http/handler";
import { answerIdempotently } from "#shared/http/idempotency";
import { success } from "#shared/http/responses";
import { dataTypeRoutes } from "./routes.ts";

export const handler = httpHandler(
  dataTypeRoutes.create,
  async ({ caller, body }) =>
    success(201, "Data type has been created successfully.", { data_type: await dataTypeService.create(caller, body) }),
  { answerIdempotently },
);
