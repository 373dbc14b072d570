import { readFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The API's published documents, rendered once at bundle time (infra/bundling.ts writes them
 * beside the function's `index.js`) instead of at every cold start: building the OpenAPI document
 * means building every route's zod schemas and converting them to JSON Schema, and the page carries
 * Swagger UI (~2 MB). The functions read the file on their first request and keep its text.
 * Run from source (local gateway, tests) they render it on the first request instead.
 */
export const publishedFiles = { document: "openapi.json", page: "docs.html" } as const;
export type PublishedDocument = keyof typeof publishedFiles;

/** Set to true by the Lambda bundling (esbuild `define`); undefined when run from source. */
declare const PUBLISHED_FILES_BESIDE_BUNDLE: boolean | undefined;

const texts = new Map<PublishedDocument, Promise<string>>();

export function publishedDocument(name: PublishedDocument): Promise<string> {
  let text = texts.get(name);
  if (!text) {
    text = readPublished(name);
    texts.set(name, text);
    text.catch(() => texts.delete(name)); // a failed read is retried by the next request
  }
  return text;
}

async function readPublished(name: PublishedDocument): Promise<string> {
  // esbuild folds this test and drops the else branch (only as an else: not after an early return),
  // so a bundle holds neither the route table nor Swagger UI.
  if (typeof PUBLISHED_FILES_BESIDE_BUNDLE !== "undefined") {
    return readFile(join(__dirname, publishedFiles[name]), "utf8");
  } else {
    const { renderPublishedDocument } = await import("./document.ts");
    return renderPublishedDocument(name);
  }
}
