import * as z from "zod";
import { defineRoute } from "#shared/http/route";

export const openApiRoutes = {
  get: defineRoute({
    operationId: "getOpenApiDocument",
    method: "GET",
    path: "/openapi.json",
    handler: "functions/http/openapi/get.ts",
    summary: "This API's OpenAPI 3.1 description (no token needed)",
    tag: "Meta",
    auth: "none",
    responses: { 200: { description: "OpenAPI 3.1 document", schema: z.looseObject({ openapi: z.string() }) } },
  }),
};
