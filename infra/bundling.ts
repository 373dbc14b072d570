import { buildSync, type BuildOptions } from "esbuild";
import { join } from "node:path";
import { readDocsAssets } from "#shared/http/docs-assets";

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
    // The docs page's Swagger UI files, inlined: a bundle has no node_modules beside it (shared/http/docs-assets.ts).
    // Only a bundle that reads them (GET /docs) carries them.
    define: { BUNDLED_DOCS_ASSETS: JSON.stringify(readDocsAssets(import.meta.url)) },
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
  return new Map(unique.map((entry) => [entry, bundleDirectory(options.outdir, entry)]));
}
