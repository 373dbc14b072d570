import type { APIGatewayProxyEvent } from "aws-lambda";
import busboy from "busboy";
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from "#shared/domain/errors";
import { header, mediaType, rawBody } from "#shared/http/parse-request";
import type { RouteDefinition } from "#shared/http/route";

/**
 * `multipart/form-data` (RFC 7578) over a body that API Gateway hands over whole (base64, as a
 * binary media type), parsed by busboy: the standard parser of Node (under multer and middy's
 * multipart middleware), which reads quoted boundaries, `_` in boundaries and any header spelling.
 * (Middy's wrapper was refused for its own content-type pattern and its 415 for a malformed body,
 * not for busboy.) The product's strict rules sit on top: wrong media type → 415, body over the
 * route's limit → 413, anything malformed → 400, and nothing busboy would skip is dropped silently:
 * a part without a form-data name, a repeated field name, text that is not UTF-8 and more than 20
 * parts are each a 400; empty files are kept.
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
  text.replace(/%(22|0d|0a)/gi, (escaped) => String.fromCharCode(Number.parseInt(escaped.slice(1), 16)));

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The parts the body delimits, counted where busboy finds them (`CRLF--boundary`, the body read
 * as if it began with CRLF, up to the close delimiter). busboy skips a part it cannot name
 * without a word; comparing its parts with this count turns such a part into a 400.
 */
function delimitedParts(body: Buffer, boundary: string): number {
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const text = Buffer.concat([CRLF, body]);
  let delimiters = 0;
  for (let at = text.indexOf(delimiter); at !== -1; at = text.indexOf(delimiter, at + delimiter.length)) {
    delimiters += 1;
    if (text[at + delimiter.length] === 0x2d && text[at + delimiter.length + 1] === 0x2d) break; // the close delimiter
  }
  return Math.max(0, delimiters - 1);
}

/** RFC 2046 allows spaces and tabs ("transport padding") between a boundary and its CRLF; busboy does not, so they go. */
function withoutTransportPadding(body: Buffer, boundary: string): Buffer {
  const dashBoundary = `--${boundary}`.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const padded = new RegExp(`(^|\\r\\n)(${dashBoundary})[ \\t]+\\r\\n`, "g");
  const text = body.toString("latin1");
  const unpadded = text.replace(padded, "$1$2\r\n");
  return unpadded === text ? body : Buffer.from(unpadded, "latin1");
}

interface ParsedPart {
  name: string | undefined;
  filename: string | undefined;
  mimeType: string;
  bytes: () => Buffer;
}

/**
 * Parses a complete multipart body into field name → text or file. The object has no prototype,
 * so names such as `__proto__`, `constructor` or `files` are plain (unknown) fields. busboy is a
 * stream; the whole body is written at once, so every part is parsed when `end()` returns.
 */
export function parseMultipart(body: Buffer, boundary: string): Record<string, MultipartValue> {
  const input = withoutTransportPadding(body, boundary);
  const parser = busboy({
    headers: { "content-type": `multipart/form-data; boundary="${boundary}"` },
    preservePath: true, // a filename stays as sent (C:\certs\sso.cer), not cut to its last segment
    defParamCharset: "utf8",
    defCharset: "latin1", // text arrives as its own bytes, checked as UTF-8 below
    limits: { fieldSize: input.length + 1 }, // never truncated: the route's body limit bounds every part
    fileHwm: input.length + 1, // a file's bytes stay buffered in full until read below
  });
  const parts: ParsedPart[] = [];
  let failure: Error | undefined;
  parser.on("field", (name, value, info) => {
    parts.push({ name, filename: undefined, mimeType: info.mimeType, bytes: () => Buffer.from(value, "latin1") });
  });
  parser.on("file", (name, stream, info) => {
    stream.on("error", () => undefined); // an unterminated file is reported once, as the form's error
    parts.push({
      name,
      filename: info.filename,
      mimeType: info.mimeType,
      bytes: () => (stream.read() as Buffer | null) ?? Buffer.alloc(0),
    });
  });
  parser.on("error", (error: Error) => {
    failure ??= error;
  });
  parser.end(input);
  failure ??= parser.errored ?? undefined;
  if (failure) throw malformed(failure.message.toLowerCase());

  const delimited = delimitedParts(input, boundary);
  if (delimited > MAX_PARTS) throw malformed(`more than ${MAX_PARTS} parts`);
  if (parts.length < delimited || parts.some((part) => !part.name))
    throw malformed("every part needs a Content-Disposition of form-data with a name");

  const fields: Record<string, MultipartValue> = Object.create(null);
  for (const part of parts) {
    const name = unescapeFormName(part.name as string);
    if (Object.hasOwn(fields, name)) throw ValidationError.single(name, "must be sent only once");
    if (part.filename !== undefined) {
      // busboy reads a missing Content-Type as text/plain (RFC 7578's default); for a file it reads as application/octet-stream here.
      const contentType = part.mimeType === "text/plain" ? "application/octet-stream" : part.mimeType;
      fields[name] = { filename: unescapeFormName(part.filename), contentType, content: Buffer.from(part.bytes()) };
      continue;
    }
    try {
      fields[name] = utf8.decode(part.bytes());
    } catch {
      throw ValidationError.single(name, "must be UTF-8 text");
    }
  }
  return fields;
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
