import { httpHandler } from "#shared/http/handler";
import { buildOpenApiDocument } from "#shared/http/openapi";
import { apiDescription, routes } from "../../routes.ts";
import { openApiRoutes } from "./routes.ts";

// Built once per cold start; the document only changes with a deployment.
const document = buildOpenApiDocument(routes, { title: "Field Operations Management API", version: "3.0.0", description: apiDescription });

export const handler = httpHandler(openApiRoutes.get, async () => ({ statusCode: 200, body: document }));
