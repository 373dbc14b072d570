import { httpHandler } from "#shared/http/handler";
import { documentResult } from "#shared/http/responses";
import { publishedDocument } from "./published.ts";
import { openApiRoutes } from "./routes.ts";

// Rendered at bundle time (./published.ts); the document only changes with a deployment.
export const handler = httpHandler(openApiRoutes.get, async () => documentResult("application/json; charset=utf-8", await publishedDocument("document")));
