/**
 * multipart/form-data bodies built byte by byte, so the fuzzer controls every edge: the boundary,
 * line endings, a missing closing delimiter, raw header lines, bytes that are not UTF-8.
 */
export interface MultipartPart {
  name: string;
  value: string | Buffer;
  /** Present: the part is a file part. */
  filename?: string;
  contentType?: string;
  /** Replaces the generated part headers entirely (header injection, a missing Content-Disposition). */
  rawHeaders?: string;
}

export interface MultipartSpec {
  parts: MultipartPart[];
  boundary: string;
  /** The boundary announced in Content-Type when it differs from the one used in the body. */
  announcedBoundary?: string | null;
  lineEnding?: "\r\n" | "\n";
  omitClosingDelimiter?: boolean;
  /** Content-Type header verbatim (overrides the announced boundary). */
  contentTypeHeader?: string;
}

export function buildMultipart(spec: MultipartSpec): { body: Buffer; contentType: string } {
  const eol = spec.lineEnding ?? "\r\n";
  const chunks: Buffer[] = [];
  for (const part of spec.parts) {
    chunks.push(Buffer.from(`--${spec.boundary}${eol}`));
    const headers =
      part.rawHeaders ??
      (part.filename === undefined
        ? `Content-Disposition: form-data; name="${part.name}"`
        : `Content-Disposition: form-data; name="${part.name}"; filename="${part.filename}"${eol}Content-Type: ${part.contentType ?? "application/octet-stream"}`);
    chunks.push(
      Buffer.from(`${headers}${eol}${eol}`),
      Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value),
      Buffer.from(eol),
    );
  }
  if (!spec.omitClosingDelimiter) chunks.push(Buffer.from(`--${spec.boundary}--${eol}`));
  const announced = spec.announcedBoundary === undefined ? spec.boundary : spec.announcedBoundary;
  const contentType = spec.contentTypeHeader ?? (announced === null ? "multipart/form-data" : `multipart/form-data; boundary=${announced}`);
  return { body: Buffer.concat(chunks), contentType };
}
