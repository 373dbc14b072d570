import * as z from "zod/mini";
import { defineRoute } from "#shared/http/route";
import { clientText } from "#shared/domain/schemas";

export const openApiRoutes = {
  get: defineRoute({
    operationId: "getOpenApiDocument",
    method: "GET",
    path: "/openapi.json",
    handler: "functions/http/openapi/get.ts",
    summary: "This API's OpenAPI 3.1 description (no token needed)",
    tag: "Meta",
    auth: "none",
    responses: () => ({
      200: { description: "OpenAPI 3.1 document", schema: z.looseObject({ openapi: z.string().check(clientText) }) },
      304: { description: "Not modified: If-None-Match names the current ETag (no body)." },
    }),
  }),
  docs: defineRoute({
    operationId: "getApiDocs",
    method: "GET",
    path: "/docs",
    handler: "functions/http/openapi/docs.ts",
    summary: "This API's reference as a web page (no token needed)",
    description:
      "Swagger UI rendering of GET /openapi.json, served whole by the API (script, styles and document inlined in one HTML page, about 2 MB, gzip-compressed for clients that accept it): it loads nothing from elsewhere, so it works offline and inside a VPC.",
    tag: "Meta",
    auth: "none",
    responses: () => ({ 200: { description: "HTML page", contentType: "text/html" } }),
  }),
};
