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
export function functionBuildOptions(options: { sourceMaps: boolean; planOverrides?: unknown }): BuildOptions {
  return {
    bundle: true,
    platform: "node",
    target: "node24",
    format: "cjs",
    minify: true,
    // ESM builds first (smaller, tree-shaken: bundles 20–38 % smaller, module load cheaper on the measured functions).
    mainFields: ["module", "main"],
    sourcemap: options.sourceMaps,
    logLevel: "error",
    // The OpenAPI document and the docs page are files written beside their bundles (publishedDocuments below).
    // The run worker's search threads start from a file beside its index.js (companionEntries below).
    // The operator's plan document, fixed at synth time, is a constant in every bundle (shared/config/tenant-plans.ts).
    define: {
      PUBLISHED_FILES_BESIDE_BUNDLE: "true",
      BUNDLED_ROUTING_THREAD: JSON.stringify(`${ROUTING_THREAD_BUNDLE}.js`),
      ...(options.planOverrides !== undefined ? { BUNDLED_TENANT_PLANS: JSON.stringify(JSON.stringify(options.planOverrides)) } : {}),
    },
  };
}

/** The bundle name of the parallel search's thread entry (shared/routing-threads/pool.ts starts `<dir>/routing-thread.js`). */
export const ROUTING_THREAD_BUNDLE = "routing-thread";

/**
 * Extra entries bundled into an entry's directory beside its index.js, by bundle name: the run worker
 * starts worker threads from its own directory, so the thread entry must be deployed with it.
 */
export const companionEntries: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "functions/jobs/routing-run.ts": { [ROUTING_THREAD_BUNDLE]: "shared/routing-threads/thread.ts" },
};

/** The directory (below the output directory) holding the bundle of one entry, as `index.js`. */
export function bundleDirectory(outdir: string, entry: string): string {
  return join(outdir, entry.replace(/\.ts$/, ""));
}

/**
 * Bundles every entry (handler module relative to the repository root) in ONE esbuild run: shared
 * modules are parsed once and duplicate entries bundled once, instead of one esbuild process per
 * function. Returns each entry's bundle directory (with the entry's companions beside index.js).
 */
export function bundleEntries(
  entries: readonly string[],
  options: { repositoryRoot: string; outdir: string; sourceMaps: boolean; planOverrides?: unknown; companions?: typeof companionEntries },
): Map<string, string> {
  const unique = [...new Set(entries)];
  const companions = options.companions ?? companionEntries;
  const entryPoints = Object.fromEntries(
    unique.flatMap((entry) => {
      const directory = entry.replace(/\.ts$/, "");
      return [
        [join(directory, "index"), join(options.repositoryRoot, entry)],
        ...Object.entries(companions[entry] ?? {}).map(([name, source]) => [join(directory, name), join(options.repositoryRoot, source)]),
      ];
    }),
  );
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
const publishedDocuments: Record<string, PublishedDocument> = {
  [openApiRoutes.get.handler]: "document",
  [openApiRoutes.docs.handler]: "page",
};
