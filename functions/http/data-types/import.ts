import { legacyImportService } from "#shared/app/legacy-import";
import { httpHandler } from "#shared/http/handler";
import { success } from "#shared/http/responses";
import { dataTypeRoutes } from "./routes.ts";

export const handler = httpHandler(dataTypeRoutes.import, async ({ caller, body }) =>
  success(202, "Import has been queued; the data type stays locked until it is ready.", {
    data_type: await legacyImportService.start(caller, body),
  }),
);
