import type { APIGatewayProxyEvent } from "aws-lambda";
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from "#shared/domain/errors";
import { header, mediaType, rawBody } from "#shared/http/parse-request";
import type { RouteDefinition } from "#shared/http/route";

/**
 * `multipart/form-data` (RFC 7578) over a body that API Gateway hands over whole (base64, as a
 * binary media type). A small strict parser instead of @middy/http-multipart-body-parser, whose
 * content-type pattern refuses RFC-valid boundaries that common clients send (`_` from axios and
 * Apache HttpClient, a quoted boundary from .NET, no space after `;`), matches the header name
 * case-sensitively and reports a malformed body as 415. Here: wrong media type → 415, body over
 * the route's limit → 413, anything malformed → 400; nothing is dropped silently (empty files are
 * kept, a repeated field name is a 400, text that is not UTF-8 is a 400).
 */
export interface UploadedFile {
  /** As sent by the client (the Content-Disposition `filename`, or `filename*` when given). */
  filename: string;
  /** The part's Content-Type as sent; `application/octet-stream` when absent. Never trusted for anything. */
  contentType: string;
  content: Buffer;
}

export type MultipartValue = string | UploadedFile;

export const DEFAULT_MAX_MULTIPART_BODY_BYTES = 1024 * 1024;
const MAX_PARTS = 20;
const MAX_PART_HEADER_BYTES = 8 * 1024;

const malformed = (message: string) => ValidationError.single("body", `malformed multipart/form-data: ${message}`);

const CRLF = Buffer.from("\r\n");

/** `type/subtype; a=b; c="d"` → lower-case parameter names → values (quoted strings unquoted). */
export function headerParameters(value: string): { value: string; parameters: Map<string, string> } {
  const parameters = new Map<string, string>();
  let index = value.indexOf(";");
  const head = (index === -1 ? value : value.slice(0, index)).trim();
  while (index !== -1 && index < value.length) {
    index += 1; // past ';'
    const equals = value.indexOf("=", index);
    if (equals === -1) break;
    const separator = value.indexOf(";", index);
    if (separator !== -1 && separator < equals) {
      index = separator; // a parameter without a value: skip it
      continue;
    }
    const name = value.slice(index, equals).trim().toLowerCase();
    let cursor = equals + 1;
    while (value[cursor] === " " || value[cursor] === "\t") cursor += 1;
    let parameterValue = "";
    if (value[cursor] === '"') {
      cursor += 1;
      while (cursor < value.length && value[cursor] !== '"') {
        // Browsers never escape (they send %22 for a quote); a backslash only escapes `"` and `\`,
        // so a Windows path such as C:\certs\sso.cer keeps its backslashes.
        if (value[cursor] === "\\" && (value[cursor + 1] === '"' || value[cursor + 1] === "\\")) cursor += 1;
        parameterValue += value[cursor];
        cursor += 1;
      }
      if (value[cursor] !== '"') throw malformed(`unterminated quoted parameter ${name}`);
      cursor += 1;
      index = value.indexOf(";", cursor);
    } else {
      const end = value.indexOf(";", cursor);
      parameterValue = (end === -1 ? value.slice(cursor) : value.slice(cursor, end)).trim();
      index = end;
    }
    if (name && !parameters.has(name)) parameters.set(name, parameterValue);
  }
  return { value: head, parameters };
}

/** RFC 2046 boundary: 1–70 characters from `bchars`, not ending in a space. */
const BOUNDARY_PATTERN = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

export function multipartBoundary(contentType: string): string {
  const boundary = headerParameters(contentType).parameters.get("boundary");
  if (boundary === undefined || !BOUNDARY_PATTERN.test(boundary)) throw malformed("the content type has no valid boundary parameter");
  return boundary;
}

/** HTML's form encoding escapes `"`, CR and LF in names and filenames as %22, %0D, %0A. */
const unescapeFormName = (text: string) =>
  text.replace(/%(22|0d|0a)/gi, (escape) => String.fromCharCode(Number.parseInt(escape.slice(1), 16)));

/** RFC 8187 `filename*=UTF-8''%E2%82%AC.pem`; undefined when not UTF-8 or not decodable. */
function extendedFilename(value: string | undefined): string | undefined {
  const match = value === undefined ? null : /^utf-8'[^']*'(.*)$/i.exec(value);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1] ?? "");
  } catch {
    return undefined;
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function parseHeaders(block: Buffer): Map<string, string> {
  let text: string;
  try {
    text = utf8.decode(block);
  } catch {
    throw malformed("part headers are not UTF-8");
  }
  const headers = new Map<string, string>();
  const lines: string[] = [];
  for (const line of text.split("\r\n")) {
    // obs-fold: a line starting with whitespace continues the previous header.
    if ((line.startsWith(" ") || line.startsWith("\t")) && lines.length > 0) lines[lines.length - 1] += ` ${line.trim()}`;
    else lines.push(line);
  }
  for (const line of lines) {
    if (line === "") continue;
    const colon = line.indexOf(":");
    if (colon <= 0) throw malformed("a part header line has no name");
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return headers;
}

function parsePart(part: Buffer): { name: string; value: MultipartValue } {
  let headerBlock: Buffer;
  let content: Buffer;
  if (part.subarray(0, 2).equals(CRLF)) {
    headerBlock = Buffer.alloc(0);
    content = part.subarray(2);
  } else {
    const end = part.indexOf("\r\n\r\n");
    if (end === -1 || end > MAX_PART_HEADER_BYTES) throw malformed("a part has no end of headers");
    headerBlock = part.subarray(0, end);
    content = part.subarray(end + 4);
  }
  const headers = parseHeaders(headerBlock);
  const disposition = headers.get("content-disposition");
  if (disposition === undefined) throw malformed("a part has no Content-Disposition header");
  const { value: dispositionType, parameters } = headerParameters(disposition);
  const rawName = parameters.get("name");
  if (dispositionType.toLowerCase() !== "form-data" || rawName === undefined || rawName === "") {
    throw malformed("a part's Content-Disposition is not form-data with a name");
  }
  const name = unescapeFormName(rawName);
  const plainFilename = parameters.get("filename");
  const filename = extendedFilename(parameters.get("filename*")) ?? (plainFilename === undefined ? undefined : unescapeFormName(plainFilename));
  if (filename !== undefined) {
    return { name, value: { filename, contentType: headers.get("content-type") || "application/octet-stream", content: Buffer.from(content) } };
  }
  try {
    return { name, value: utf8.decode(content) };
  } catch {
    throw ValidationError.single(name, "must be UTF-8 text");
  }
}

/**
 * Parses a complete multipart body into field name → text or file. The object has no prototype,
 * so names such as `__proto__`, `constructor` or `files` are plain (unknown) fields.
 */
export function parseMultipart(body: Buffer, boundary: string): Record<string, MultipartValue> {
  const fields: Record<string, MultipartValue> = Object.create(null);
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  // The first delimiter may open the body (no preamble) or follow a preamble line.
  let position: number;
  if (body.subarray(0, delimiter.length - 2).equals(delimiter.subarray(2))) position = delimiter.length - 2;
  else {
    const first = body.indexOf(delimiter);
    if (first === -1) throw malformed("the boundary does not occur in the body");
    position = first + delimiter.length;
  }
  let parts = 0;
  for (;;) {
    if (body[position] === 0x2d && body[position + 1] === 0x2d) return fields; // close delimiter `--`; the epilogue is ignored
    while (body[position] === 0x20 || body[position] === 0x09) position += 1; // transport padding
    if (!body.subarray(position, position + 2).equals(CRLF)) throw malformed("a boundary line does not end with CRLF");
    position += 2;
    const next = body.indexOf(delimiter, position);
    if (next === -1) throw malformed("the body does not end with the closing boundary");
    parts += 1;
    if (parts > MAX_PARTS) throw malformed(`more than ${MAX_PARTS} parts`);
    const { name, value } = parsePart(body.subarray(position, next));
    if (Object.hasOwn(fields, name)) throw ValidationError.single(name, "must be sent only once");
    fields[name] = value;
    position = next + delimiter.length;
  }
}

/** The route's multipart body: 415 for another media type, 413 over the route's limit, 400 when malformed. */
export function parseMultipartBody(event: APIGatewayProxyEvent, route: RouteDefinition): Record<string, MultipartValue> {
  if (mediaType(event) !== "multipart/form-data") throw new UnsupportedMediaTypeError("multipart/form-data");
  const bytes = rawBody(event);
  const limit = route.maxBodyBytes ?? DEFAULT_MAX_MULTIPART_BODY_BYTES;
  if (bytes.length > limit) throw new PayloadTooLargeError(`Request body is larger than ${limit} bytes.`);
  if (bytes.length === 0) throw ValidationError.single("body", "a multipart/form-data body is required");
  return parseMultipart(bytes, multipartBoundary(header(event, "content-type") ?? ""));
}
