import type { APIGatewayProxyResult } from "aws-lambda";
import { appConfig } from "#shared/config/env";

/**
 * Success bodies are `{ status: true, message, …payload }` (payload key is `data` unless the spec names another).
 * A string body is a document sent as it is (the docs page, a map): its `content-type` comes from `headers`.
 */
export interface HttpResult {
  statusCode: number;
  body: Record<string, unknown> | string;
  headers?: Record<string, string>;
}

export function success(statusCode: number, message: string, payload: Record<string, unknown>): HttpResult {
  return { statusCode, body: { status: true, message, ...payload } };
}

export const ok = (message: string, data: unknown, extra: Record<string, unknown> = {}): HttpResult =>
  success(200, message, { data, ...extra });

export const created = (message: string, data: unknown): HttpResult => success(201, message, { data });

/** A 200 document that is not the product's JSON envelope (HTML, SVG, GeoJSON). */
export const documentResult = (contentType: string, body: string, headers: Record<string, string> = {}): HttpResult => ({
  statusCode: 200,
  body,
  headers: { "content-type": contentType, ...headers },
});

export function toProxyResult(result: HttpResult): APIGatewayProxyResult {
  if (typeof result.body === "string")
    return { statusCode: result.statusCode, headers: { "cache-control": "no-store", ...result.headers }, body: result.body };
  return {
    statusCode: result.statusCode,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...result.headers },
    body: JSON.stringify(result.body),
  };
}

export const REQUEST_ID_HEADER = "X-Request-Id";

/** The methods and request headers API Gateway's CORS preflight (the stack's defaultCorsPreflightOptions) allows. */
export const corsPreflightHeaders = {
  "access-control-allow-methods": "OPTIONS,GET,PUT,POST,DELETE,PATCH,HEAD",
  "access-control-allow-headers": "Authorization,Content-Type,Idempotency-Key,If-Match",
};

/**
 * CORS response headers for a request from `origin`: `*` when any origin is allowed; otherwise the
 * request's origin echoed back when it is in the list (nothing when not), with `Vary: Origin` so
 * caches keep one answer per origin. Browsers may read the request id, ETag, Idempotency-Replayed and
 * Retry-After (of a 503) headers.
 */
export function corsHeaders(allowedOrigins: "*" | readonly string[], origin: string | undefined): Record<string, string> {
  const exposed = { "access-control-expose-headers": `${REQUEST_ID_HEADER},ETag,Idempotency-Replayed,Retry-After` };
  if (allowedOrigins === "*") return { "access-control-allow-origin": "*", ...exposed };
  if (origin !== undefined && allowedOrigins.includes(origin)) return { "access-control-allow-origin": origin, vary: "Origin", ...exposed };
  return { vary: "Origin" };
}

/**
 * Headers every answer carries, success or error: the request id (the Lambda invocation's
 * awsRequestId, the id every log line of the request carries), `nosniff` and CORS.
 */
export function platformHeaders(requestId: string, origin: string | undefined): Record<string, string> {
  // nosniff: a browser never reads an answer as another type than it says (an error JSON as HTML).
  return { "x-request-id": requestId, "x-content-type-options": "nosniff", ...corsHeaders(appConfig().CORS_ALLOWED_ORIGINS, origin) };
}

/** RFC 6750 challenge of a 401: `invalid_token` when a bearer token was sent but refused. */
export function bearerChallenge(authorizationHeader: string | undefined): string {
  return /^Bearer\s+\S/i.test(authorizationHeader ?? "") ? 'Bearer error="invalid_token"' : "Bearer";
}
