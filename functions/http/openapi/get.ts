import { createHash } from "node:crypto";
import { httpHandler } from "#shared/http/handler";
import { documentResult } from "#shared/http/responses";
import { publishedDocument } from "./published.ts";
import { openApiRoutes } from "./routes.ts";

/** The document's strong ETag (its SHA-256), computed once per function instance. */
let etag: Promise<string> | undefined;

// Rendered at bundle time (./published.ts); the document only changes with a deployment, so clients
// and caches keep it 5 minutes and then revalidate: a matching If-None-Match answers 304 without the 472 KB body.
export const handler = httpHandler(openApiRoutes.get, async (request) => {
  const text = await publishedDocument("document");
  etag ??= Promise.resolve(`"${createHash("sha256").update(text).digest("base64url")}"`);
  const tag = await etag;
  const caching = { etag: tag, "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" };
  const ifNoneMatch = Object.entries(request.event.headers ?? {}).find(([name]) => name.toLowerCase() === "if-none-match")?.[1];
  if (ifNoneMatch?.split(",").some((candidate) => candidate.trim().replace(/^W\//, "") === tag || candidate.trim() === "*")) {
    return { statusCode: 304, body: "", headers: caching };
  }
  return documentResult("application/json; charset=utf-8", text, caching);
});
