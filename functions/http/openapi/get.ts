import { httpHandler } from "#shared/http/handler";
import { openApiDocument } from "./document.ts";
import { openApiRoutes } from "./routes.ts";

// Built once per cold start; the document only changes with a deployment.
const document = openApiDocument();

export const handler = httpHandler(openApiRoutes.get, async () => ({ statusCode: 200, body: document }));
