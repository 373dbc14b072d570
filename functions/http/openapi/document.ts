import { readDocsAssets } from "#shared/http/docs-assets";
import { renderDocsPage } from "#shared/http/docs-page";
import { buildOpenApiDocument } from "#shared/http/openapi";
import { apiDescription, routes } from "../../routes.ts";
import type { PublishedDocument } from "./published.ts";

/** The OpenAPI document of the route table: answered by GET /openapi.json and embedded in GET /docs. */
export const openApiDocument = () =>
  buildOpenApiDocument(routes, { title: "Field Operations Management API", version: "3.1.0", description: apiDescription });

/** The text of a published document (./published.ts): rendered by the bundling, or on first request when run from source. */
export function renderPublishedDocument(name: PublishedDocument): string {
  const document = openApiDocument();
  return name === "document" ? JSON.stringify(document) : renderDocsPage(document, readDocsAssets(import.meta.url));
}
