import { buildOpenApiDocument } from "#shared/http/openapi";
import { apiDescription, routes } from "../../routes.ts";

/** The OpenAPI document of the route table: answered by GET /openapi.json and embedded in GET /docs. */
export const openApiDocument = () => buildOpenApiDocument(routes, { title: "Field Operations Management API", version: "3.0.0", description: apiDescription });
