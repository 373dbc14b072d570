import { httpHandler } from "#shared/http/handler";
import { docsAssets } from "#shared/http/docs-assets";
import { renderDocsPage } from "#shared/http/docs-page";
import { documentResult } from "#shared/http/responses";
import { openApiDocument } from "./document.ts";
import { openApiRoutes } from "./routes.ts";

// Built once per cold start, like GET /openapi.json: the page embeds that same document.
const page = renderDocsPage(openApiDocument(), docsAssets());

export const handler = httpHandler(openApiRoutes.docs, async () =>
  documentResult("text/html; charset=utf-8", page, { "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" }),
);
