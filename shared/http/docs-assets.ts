import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/**
 * Swagger UI's standalone files (package swagger-ui-dist), inlined into the docs page so it needs
 * no CDN at run time: it works offline and inside a VPC without internet access. The page is
 * rendered at bundle time (functions/http/openapi/published.ts), so no bundle holds these files.
 */
export interface DocsAssets {
  script: string;
  css: string;
}

export const docsAssetFiles: Readonly<Record<keyof DocsAssets, string>> = {
  script: "swagger-ui-dist/swagger-ui-bundle.js",
  css: "swagger-ui-dist/swagger-ui.css",
};

/** The files' text, resolved like an import from `from` (a file path or URL). */
export function readDocsAssets(from: string): DocsAssets {
  const resolvePackageFile = createRequire(from).resolve;
  return {
    script: readFileSync(resolvePackageFile(docsAssetFiles.script), "utf8"),
    css: readFileSync(resolvePackageFile(docsAssetFiles.css), "utf8"),
  };
}
