import type { DocsAssets } from "#shared/http/docs-assets";

/**
 * The human API reference: one self-contained HTML page with Swagger UI's script and styles inlined
 * and the OpenAPI document embedded, so the page fetches nothing (no CDN, no second request for
 * the document, no online validator).
 */

/** JSON that is safe inside a `<script>` element (no `</script>`, no `<!--`, no line separators). */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export function renderDocsPage(document: { info: { title: string } }, assets: DocsAssets): string {
  // A script element ends at the first `</script`; the bundle has none today, this keeps it so.
  const script = assets.script.replace(/<\/script/gi, "<\\/script");
  const css = assets.css.replace(/<\/style/gi, "<\\/style");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(document.info.title)} — API reference</title>
<style>${css}</style>
<style>body { margin: 0; } .swagger-ui .topbar { display: none; }</style>
</head>
<body>
<div id="swagger-ui"></div>
<script>${script}</script>
<script>
window.ui = SwaggerUIBundle({
  spec: ${scriptJson(document)},
  dom_id: "#swagger-ui",
  deepLinking: true,
  displayOperationId: true,
  docExpansion: "list",
  defaultModelsExpandDepth: 0,
  validatorUrl: null,
  persistAuthorization: false,
});
</script>
</body>
</html>
`;
}
