import { buildSync, type BuildOptions } from "esbuild";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderPublishedDocument } from "#functions/http/openapi/document";
import { publishedFiles, type PublishedDocument } from "#functions/http/openapi/published";
import { openApiRoutes } from "#functions/http/openapi/routes";

/**
 * How every function is bundled: one CommonJS file for Node.js 24 with the AWS SDK inside (pinned
 * by package-lock instead of the runtime's copy), minified, by the local esbuild (never Docker).
 * Source maps only when asked (`-c sourceMaps=true`): a map is 3–4× the bundle and
 * `--enable-source-maps` slows every cold start.
 * bench/cold.ts bundles with these same options, so what it measures is what is deployed.
 */
export function functionBuildOptions(options: { sourceMaps: boolean }): BuildOptions {
  return {
    bundle: true,
    platform: "node",
    target: "node24",
    format: "cjs",
    minify: true,
    sourcemap: options.sourceMaps,
    logLevel: "error",
    // The OpenAPI document and the docs page are files written beside their bundles (publishedDocuments below).
    define: { PUBLISHED_FILES_BESIDE_BUNDLE: "true" },
  };
}

/** The directory (below the output directory) holding the bundle of one entry, as `index.js`. */
export function bundleDirectory(outdir: string, entry: string): string {
  return join(outdir, entry.replace(/\.ts$/, ""));
}

/**
 * Bundles every entry (handler module relative to the repository root) in ONE esbuild run: shared
 * modules are parsed once and duplicate entries bundled once, instead of one esbuild process per
 * function. Returns each entry's bundle directory.
 */
export function bundleEntries(entries: readonly string[], options: { repositoryRoot: string; outdir: string; sourceMaps: boolean }): Map<string, string> {
  const unique = [...new Set(entries)];
  const entryPoints = Object.fromEntries(unique.map((entry) => [join(entry.replace(/\.ts$/, ""), "index"), join(options.repositoryRoot, entry)]));
  buildSync({ ...functionBuildOptions(options), absWorkingDir: options.repositoryRoot, entryPoints, outdir: options.outdir });
  for (const entry of unique) {
    const document = publishedDocuments[entry];
    if (document) writeFileSync(join(bundleDirectory(options.outdir, entry), publishedFiles[document]), renderPublishedDocument(document));
  }
  return new Map(unique.map((entry) => [entry, bundleDirectory(options.outdir, entry)]));
}

/**
 * The documents rendered at bundle time and shipped beside a bundle (functions/http/openapi/published.ts),
 * so their functions neither build every route's schemas nor parse Swagger UI at cold start.
 */
const publishedDocuments: Record<string, PublishedDocument> = { [openApiRoutes.get.handler]: "document", [openApiRoutes.docs.handler]: "page" };
