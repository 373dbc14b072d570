import { legacyImportService } from "#shared/app/legacy-import";
import { httpHandler } from "#shared/http/handler";
import { created } from "#shared/http/responses";
import { dataTypeRoutes } from "./routes.ts";

export const handler = httpHandler(dataTypeRoutes.importUpload, async ({ caller }) =>
  created(
    "POST the export to url as a form (fields, then file), then POST /data-type/import with its uploadId.",
    await legacyImportService.uploadTarget(caller),
  ),
);
