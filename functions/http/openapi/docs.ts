import { createHash } from "node:crypto";
import { httpHandler } from "#shared/http/handler";
import { documentResult } from "#shared/http/responses";
import { publishedDocument } from "./published.ts";
import { openApiRoutes } from "./routes.ts";

/**
 * A strict Content-Security-Policy for the page: it loads nothing, runs only its own two inline
 * scripts (allowed by their SHA-256, so an injected script would not run), styles inline (Swagger UI
 * sets style attributes), images from data: URLs, and calls only this API (Try it out).
 */
export function docsPageContentSecurityPolicy(page: string): string {
  const scripts = [...page.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    (match) =>
      `'sha256-${createHash("sha256")
        .update(match[1] ?? "")
        .digest("base64")}'`,
  );
  return [
    "default-src 'none'",
    `script-src ${scripts.join(" ")}`,
    "style-src 'unsafe-inline'",
    "img-src data:",
    "font-src data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

let policy: string | undefined;

// Rendered at bundle time like GET /openapi.json (./published.ts): the page embeds that same document.
export const handler = httpHandler(openApiRoutes.docs, async () => {
  const page = await publishedDocument("page");
  policy ??= docsPageContentSecurityPolicy(page);
  return documentResult("text/html; charset=utf-8", page, {
    "cache-control": "public, max-age=300",
    "x-content-type-options": "nosniff",
    "content-security-policy": policy,
  });
});
