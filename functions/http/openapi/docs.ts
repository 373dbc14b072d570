import { httpHandler } from "#shared/http/handler";
import { documentResult } from "#shared/http/responses";
import { publishedDocument } from "./published.ts";
import { openApiRoutes } from "./routes.ts";

// Rendered at bundle time like GET /openapi.json (./published.ts): the page embeds that same document.
export const handler = httpHandler(openApiRoutes.docs, async () =>
  documentResult("text/html; charset=utf-8", await publishedDocument("page"), { "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" }),
);
