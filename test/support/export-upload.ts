/**
 * The upload a client makes with the answer of POST /data-type/import/upload (docs/api/legacy-import.md):
 * a multipart/form-data POST of the presigned `fields` as given, then the export as the last field,
 * `file` (S3 ignores fields after it). `fields` overrides one of them, as a client that changed the
 * Content-Type would.
 */
export async function postExport(
  target: { url: string; fields: Record<string, string> },
  content: string | Uint8Array,
  fields: Record<string, string> = {},
): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries({ ...target.fields, ...fields })) form.append(name, value);
  const type = fields["Content-Type"] ?? target.fields["Content-Type"] ?? "application/octet-stream";
  form.append("file", new Blob([content], { type }), "export.jsonl");
  return fetch(target.url, { method: "POST", body: form });
}
