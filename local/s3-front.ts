import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, request as httpRequest, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { SignatureV4 } from "@smithy/signature-v4";
import type { Checksum, HttpRequest, QueryParameterBag, SourceData } from "@smithy/types";
import busboy from "busboy";

/**
 * The authorization S3 does and s3rver does not (docs/operations.md, "The local S3"), as an HTTP
 * front in front of s3rver: s3rver skips SigV4 verification, answers anonymous requests and stores
 * any browser form POST whatever its policy says. The front lets a request reach s3rver only when
 * S3 would have accepted it:
 *
 * - a browser-based form POST (`POST /bucket`, multipart/form-data, no Authorization) whose policy
 *   is signed with the emulator's key (SigV4 over the base64 policy), not expired, and whose every
 *   condition holds (exact values, `starts-with`, `eq`, `content-length-range` on the file's size,
 *   the bucket of the URL) and names every form field;
 * - a request signed in its Authorization header (AWS4-HMAC-SHA256) or by a presigned URL
 *   (X-Amz-* query), the signature recomputed with @smithy/signature-v4 (the SDK's own signer) and
 *   the time checked (15 minutes of skew; a presigned URL's X-Amz-Expires);
 * - a CORS preflight (OPTIONS: S3 answers it without credentials).
 *
 * Everything else — an anonymous GET, HEAD, PUT or DELETE, a form with no or another signature — gets
 * S3's XML error and status. Not modelled: the payload's SHA-256 against x-amz-content-sha256 (the
 * signature covers the header's value), chunk signatures of aws-chunked bodies, session tokens,
 * bucket policies/ACLs (there is one private bucket), `${filename}` in a form's key.
 */
export interface S3FrontOptions {
  /** The s3rver behind the front. */
  upstream: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** A request body larger than this is refused (400 MaxMessageLengthExceeded) without reaching s3rver. */
  maxBodyBytes?: number;
  /** The clock (tests of expiry); default Date.now. */
  now?: () => number;
}

export interface S3Front {
  endpoint: string;
  stop(): Promise<void>;
}

/** S3's allowed clock skew for header-signed requests (RequestTimeTooSkewed beyond it). */
const maxSkewMs = 15 * 60 * 1000;
/** SigV4 presigned URLs live at most 7 days. */
const maxPresignSeconds = 7 * 24 * 60 * 60;

class S3Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const accessDenied = (message = "Access Denied") => new S3Refusal(403, "AccessDenied", message);
const policyRefusal = (detail: string) => accessDenied(`Invalid according to Policy: ${detail}`);
const signatureMismatch = () =>
  new S3Refusal(
    403,
    "SignatureDoesNotMatch",
    "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
  );

/** SHA-256 (and HMAC-SHA256 with a key) in the shape @smithy/signature-v4 takes. */
class NodeSha256 implements Checksum {
  private hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(private readonly secret?: SourceData) {
    this.hash = this.fresh();
  }
  private fresh() {
    return this.secret === undefined ? createHash("sha256") : createHmac("sha256", toBuffer(this.secret));
  }
  update(data: Uint8Array): void {
    this.hash.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

function toBuffer(data: SourceData): Buffer {
  if (typeof data === "string") return Buffer.from(data, "utf8");
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

export async function startS3Front(options: S3FrontOptions): Promise<S3Front> {
  const upstream = new URL(options.upstream);
  const now = options.now ?? Date.now;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024 * 1024;
  const signer = new SignatureV4({
    credentials: options.credentials,
    region: "us-east-1",
    service: "s3",
    sha256: NodeSha256,
    // S3 signs the path as sent (no second encoding, no dot-segment normalization).
    uriEscapePath: false,
  });
  const signingArguments = (scope: CredentialScope) => ({
    signingDate: scope.date,
    signingRegion: scope.region,
    signingService: scope.service,
  });

  function credentialScope(credential: string | undefined, longDate: string | undefined): CredentialScope {
    const parts = (credential ?? "").split("/");
    if (parts.length !== 5 || parts[4] !== "aws4_request")
      throw new S3Refusal(400, "AuthorizationHeaderMalformed", "The authorization header is malformed; the Credential is mal-formed.");
    const [accessKeyId, day, region, service] = parts as [string, string, string, string];
    if (accessKeyId !== options.credentials.accessKeyId)
      throw new S3Refusal(403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.");
    const date = parseLongDate(longDate);
    if (!date || longDate?.slice(0, 8) !== day)
      throw new S3Refusal(
        400,
        "AuthorizationHeaderMalformed",
        "The authorization header is malformed; the date of the Credential does not match X-Amz-Date.",
      );
    return { date, region, service };
  }

  async function verifyHeaderSigned(request: IncomingMessage, target: RequestTarget): Promise<void> {
    const authorization = request.headers.authorization ?? "";
    const match = /^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})$/.exec(
      authorization.trim(),
    );
    if (!match)
      throw new S3Refusal(
        400,
        authorization.startsWith("AWS4-HMAC-SHA256") ? "AuthorizationHeaderMalformed" : "InvalidRequest",
        authorization.startsWith("AWS4-HMAC-SHA256")
          ? "The authorization header is malformed."
          : "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.",
      );
    const [, credential, signedHeaderList, provided] = match as unknown as [string, string, string, string];
    const longDate = headerValue(request, "x-amz-date");
    const scope = credentialScope(credential, longDate);
    if (Math.abs(now() - scope.date.getTime()) > maxSkewMs)
      throw new S3Refusal(403, "RequestTimeTooSkewed", "The difference between the request time and the current time is too large.");
    if (!headerValue(request, "x-amz-content-sha256"))
      throw new S3Refusal(400, "InvalidRequest", "Missing required header for this request: x-amz-content-sha256");
    const signedHeaders = signedHeaderList.split(";");
    if (!signedHeaders.includes("host")) throw accessDenied("There were headers present in the request which were not signed");
    const headers: Record<string, string> = {};
    for (const name of signedHeaders) headers[name] = headerValue(request, name) ?? "";
    const signed = await signer.sign(signableRequest(request, target, headers, target.query), {
      ...signingArguments(scope),
      signableHeaders: new Set(signedHeaders),
    });
    const recomputed = /Signature=([0-9a-f]{64})$/.exec(String(signed.headers.authorization))?.[1] ?? "";
    const recomputedList = /SignedHeaders=([^,]+),/.exec(String(signed.headers.authorization))?.[1];
    if (recomputedList !== signedHeaderList || !sameHex(recomputed, provided)) throw signatureMismatch();
  }

  async function verifyPresigned(request: IncomingMessage, target: RequestTarget): Promise<void> {
    const query = target.query;
    const single = (name: string) => {
      const value = query[name];
      return Array.isArray(value) ? undefined : (value ?? undefined);
    };
    if (single("X-Amz-Algorithm") !== "AWS4-HMAC-SHA256")
      throw new S3Refusal(400, "AuthorizationQueryParametersError", 'X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"');
    const provided = single("X-Amz-Signature");
    const signedHeaderList = single("X-Amz-SignedHeaders");
    const expiresText = single("X-Amz-Expires");
    if (!provided || !signedHeaderList || !expiresText)
      throw new S3Refusal(
        400,
        "AuthorizationQueryParametersError",
        "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.",
      );
    const scope = credentialScope(single("X-Amz-Credential"), single("X-Amz-Date"));
    const expiresIn = Number(expiresText);
    if (!Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > maxPresignSeconds)
      throw new S3Refusal(
        400,
        "AuthorizationQueryParametersError",
        "X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds",
      );
    if (now() > scope.date.getTime() + expiresIn * 1000) throw accessDenied("Request has expired");
    if (now() < scope.date.getTime() - maxSkewMs) throw accessDenied("Request is not valid yet");
    const signedHeaders = signedHeaderList.split(";");
    if (!signedHeaders.includes("host")) throw accessDenied("There were headers present in the request which were not signed");
    const headers: Record<string, string> = { "x-amz-content-sha256": "UNSIGNED-PAYLOAD" };
    for (const name of signedHeaders) headers[name] = headerValue(request, name) ?? "";
    const unsigned: QueryParameterBag = {};
    for (const [name, value] of Object.entries(query))
      if (!["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature"].includes(name))
        unsigned[name] = value;
    // Presigned S3 URLs sign UNSIGNED-PAYLOAD; the header only carries that value into the signer.
    const presigned = await signer.presign(signableRequest(request, target, headers, unsigned), {
      ...signingArguments(scope),
      expiresIn,
      unhoistableHeaders: new Set(["x-amz-content-sha256"]),
      unsignableHeaders: new Set(["x-amz-content-sha256"]),
    });
    const recomputed = String(presigned.query?.["X-Amz-Signature"] ?? "");
    if (presigned.query?.["X-Amz-SignedHeaders"] !== signedHeaderList || !sameHex(recomputed, provided)) throw signatureMismatch();
  }

  /** A browser-based upload (sigv4-HTTPPOSTConstructPolicy, sigv4-authentication-HTTPPOST). */
  async function verifyFormPost(request: IncomingMessage, target: RequestTarget, body: Buffer): Promise<void> {
    const form = await readForm(request, body);
    const field = (name: string) => form.fields.get(name.toLowerCase());
    const policyText = field("policy");
    if (policyText === undefined) throw accessDenied();
    if (field("x-amz-algorithm") !== "AWS4-HMAC-SHA256")
      throw new S3Refusal(400, "InvalidArgument", "POST requires the x-amz-algorithm AWS4-HMAC-SHA256 with a policy");
    const provided = field("x-amz-signature");
    if (!provided) throw new S3Refusal(400, "InvalidArgument", "Bucket POST must contain a field named 'x-amz-signature'.");
    const scope = credentialScope(field("x-amz-credential"), field("x-amz-date"));
    // StringToSign is the base64 policy as sent; the signature is its HMAC with the SigV4 signing key.
    const recomputed = await signer.sign(policyText, signingArguments(scope));
    if (!sameHex(recomputed, provided)) throw signatureMismatch();
    let policy: { expiration?: unknown; conditions?: unknown };
    try {
      policy = JSON.parse(Buffer.from(policyText, "base64").toString("utf8"));
    } catch {
      throw new S3Refusal(400, "InvalidPolicyDocument", "Invalid Policy: Invalid JSON.");
    }
    const expiration = typeof policy.expiration === "string" ? Date.parse(policy.expiration) : Number.NaN;
    if (!Number.isFinite(expiration)) throw new S3Refusal(400, "InvalidPolicyDocument", "Invalid Policy: Policy missing expiration.");
    if (now() > expiration) throw policyRefusal("Policy expired.");
    if (!Array.isArray(policy.conditions)) throw new S3Refusal(400, "InvalidPolicyDocument", "Invalid Policy: Policy missing conditions.");
    if (form.file === undefined) throw new S3Refusal(400, "InvalidArgument", "POST requires exactly one file upload per request.");
    // The bucket is the URL's; a `bucket` form field, when sent, is held to the same condition.
    const values = new Map(form.fields);
    values.set("bucket", target.bucket);
    const covered = new Set<string>();
    for (const condition of policy.conditions) {
      const check = parseCondition(condition);
      if (check.kind === "content-length-range") {
        if (form.file.size > check.max) throw new S3Refusal(400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size");
        if (form.file.size < check.min)
          throw new S3Refusal(400, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size");
        continue;
      }
      covered.add(check.field);
      const candidates = [values.get(check.field) ?? ""];
      if (check.field === "bucket" && form.fields.has("bucket")) candidates.push(form.fields.get("bucket") ?? "");
      const holds = (value: string) => (check.kind === "eq" ? value === check.value : value.startsWith(check.value));
      if (!candidates.every(holds)) throw policyRefusal(`Policy Condition failed: ${JSON.stringify(condition)}`);
    }
    const extra = [...form.fields.keys()].filter(
      (name) => !covered.has(name) && !["policy", "x-amz-signature", "file"].includes(name) && !name.startsWith("x-ignore-"),
    );
    if (extra.length > 0) throw policyRefusal(`Extra input fields: ${extra.join(", ")}`);
  }

  async function authorize(request: IncomingMessage, target: RequestTarget, body: Buffer): Promise<void> {
    const query = target.query;
    const byHeader = request.headers.authorization !== undefined;
    const byQuery = "X-Amz-Algorithm" in query || "X-Amz-Signature" in query || "X-Amz-Credential" in query;
    if (byHeader && byQuery)
      throw new S3Refusal(
        400,
        "InvalidArgument",
        "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter or the Authorization header should be specified",
      );
    if (byHeader) return verifyHeaderSigned(request, target);
    if (byQuery) return verifyPresigned(request, target);
    if ("Signature" in query || "AWSAccessKeyId" in query)
      throw new S3Refusal(
        400,
        "InvalidRequest",
        "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.",
      );
    if (request.method === "OPTIONS") return;
    const contentType = request.headers["content-type"] ?? "";
    if (request.method === "POST" && target.bucket && !target.key && /^multipart\/form-data/i.test(contentType))
      return verifyFormPost(request, target, body);
    throw accessDenied();
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error) => {
      if (!response.headersSent)
        sendError(response, new S3Refusal(500, "InternalError", "We encountered an internal error. Please try again."));
      else response.destroy(error as Error);
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request, maxBodyBytes);
    if (body === undefined) {
      sendError(response, new S3Refusal(400, "MaxMessageLengthExceeded", "Your request was too big."));
      return;
    }
    const target = requestTarget(request.url ?? "/");
    try {
      await authorize(request, target, body);
    } catch (error) {
      if (error instanceof S3Refusal) {
        sendError(response, error, request.method === "HEAD");
        return;
      }
      throw error;
    }
    await forward(request, response, body);
  }

  function forward(request: IncomingMessage, response: ServerResponse, body: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      const headers = { ...request.headers };
      // The body was read whole: send it with its length (a chunked request is re-framed).
      delete headers["transfer-encoding"];
      delete headers.expect;
      headers["content-length"] = String(body.length);
      const outbound = httpRequest(
        { hostname: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
          answer.on("end", resolve);
          answer.on("error", reject);
        },
      );
      outbound.on("error", reject);
      outbound.end(body);
    });
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface CredentialScope {
  date: Date;
  region: string;
  service: string;
}

interface RequestTarget {
  /** The path as sent (S3 signs it as sent). */
  path: string;
  /** Decoded query parameters (the signer encodes them itself); a repeated name gives a list. */
  query: QueryParameterBag;
  bucket: string;
  key: string;
}

/** Path-style addressing (the local stack's S3_FORCE_PATH_STYLE): /bucket/key. */
function requestTarget(url: string): RequestTarget {
  const questionMark = url.indexOf("?");
  const path = questionMark === -1 ? url : url.slice(0, questionMark);
  const query: QueryParameterBag = {};
  if (questionMark !== -1) {
    for (const pair of url.slice(questionMark + 1).split("&")) {
      if (pair === "") continue;
      const equals = pair.indexOf("=");
      // Not URLSearchParams: S3 does not read "+" as a space.
      const name = safeDecode(equals === -1 ? pair : pair.slice(0, equals));
      const value = equals === -1 ? "" : safeDecode(pair.slice(equals + 1));
      const existing = query[name];
      query[name] = existing === undefined || existing === null ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
    }
  }
  const [, bucket = "", ...rest] = path.split("/");
  return { path, query, bucket: safeDecode(bucket), key: safeDecode(rest.join("/")) };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function signableRequest(
  request: IncomingMessage,
  target: RequestTarget,
  headers: Record<string, string>,
  query: QueryParameterBag,
): HttpRequest {
  const host = request.headers.host ?? "";
  return {
    method: request.method ?? "GET",
    protocol: "http:",
    hostname: host.replace(/:\d+$/, ""),
    path: target.path,
    query,
    headers,
  };
}

function headerValue(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(",") : value;
}

/** 20261127T203400Z → Date. */
function parseLongDate(text: string | undefined): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text ?? "");
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second] = match.map(Number) as number[];
  const date = new Date(Date.UTC(year as number, (month as number) - 1, day, hour, minute, second));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function sameHex(a: string, b: string): boolean {
  const left = Buffer.from(a.toLowerCase());
  const right = Buffer.from(b.toLowerCase());
  return left.length === right.length && timingSafeEqual(left, right);
}

type Condition = { kind: "eq" | "starts-with"; field: string; value: string } | { kind: "content-length-range"; min: number; max: number };

/**
 * A policy condition: `{"field": "value"}` (exact), `["eq", "$field", "value"]`,
 * `["starts-with", "$field", "prefix"]`, `["content-length-range", min, max]`. Field names match
 * case-insensitively (S3 reads form field names so); values exactly.
 */
function parseCondition(condition: unknown): Condition {
  const invalid = () => new S3Refusal(400, "InvalidPolicyDocument", `Invalid Policy: Invalid Condition: ${JSON.stringify(condition)}`);
  if (Array.isArray(condition)) {
    const [operator, first, second] = condition as unknown[];
    if (operator === "content-length-range") {
      const min = Number(first);
      const max = Number(second);
      if (condition.length !== 3 || !Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min) throw invalid();
      return { kind: "content-length-range", min, max };
    }
    if (
      (operator === "eq" || operator === "starts-with") &&
      condition.length === 3 &&
      typeof first === "string" &&
      first.startsWith("$") &&
      typeof second === "string"
    )
      return { kind: operator, field: first.slice(1).toLowerCase(), value: second };
    throw invalid();
  }
  if (condition && typeof condition === "object") {
    const entries = Object.entries(condition);
    const [entry] = entries;
    if (entries.length === 1 && entry && typeof entry[1] === "string")
      return { kind: "eq", field: entry[0].toLowerCase(), value: entry[1] };
  }
  throw invalid();
}

/** The form's fields before the file (S3 ignores those after it), names lower-cased, and the file's size. */
async function readForm(request: IncomingMessage, body: Buffer): Promise<{ fields: Map<string, string>; file?: { size: number } }> {
  return new Promise((resolve, reject) => {
    const fields = new Map<string, string>();
    let file: { size: number } | undefined;
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: request.headers, limits: { fieldSize: 1024 * 1024, files: 1 } });
    } catch {
      reject(new S3Refusal(400, "MalformedPOSTRequest", "The body of your POST request is not well-formed multipart/form-data."));
      return;
    }
    parser.on("field", (name, value) => {
      if (file === undefined) fields.set(name.toLowerCase(), value);
    });
    parser.on("file", (name, stream) => {
      if (name.toLowerCase() !== "file" || file !== undefined) {
        stream.resume();
        return;
      }
      const counted = { size: 0 };
      file = counted;
      stream.on("data", (chunk: Buffer) => (counted.size += chunk.length));
    });
    parser.on("error", () =>
      reject(new S3Refusal(400, "MalformedPOSTRequest", "The body of your POST request is not well-formed multipart/form-data.")),
    );
    parser.on("close", () => resolve({ fields, file }));
    Readable.from([body]).pipe(parser);
  });
}

/** The whole body, or undefined when it is longer than `limit`. */
async function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) tooLarge = true;
    if (!tooLarge) chunks.push(chunk);
  }
  return tooLarge ? undefined : Buffer.concat(chunks);
}

function sendError(response: ServerResponse, refusal: S3Refusal, headOnly = false): void {
  const requestId = randomBytes(8).toString("hex").toUpperCase();
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${refusal.code}</Code><Message>${escapeXml(refusal.message)}</Message><RequestId>${requestId}</RequestId><HostId>local-s3-front</HostId></Error>`;
  response.writeHead(refusal.status, {
    "content-type": "application/xml",
    "content-length": Buffer.byteLength(xml),
    "x-amz-request-id": requestId,
  });
  response.end(headOnly ? undefined : xml);
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}
