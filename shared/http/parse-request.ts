import type { APIGatewayProxyEvent } from "aws-lambda";
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from "#shared/domain/errors";
import type { RouteDefinition } from "#shared/http/route";

export const DEFAULT_MAX_JSON_BODY_BYTES = 1024 * 1024;
/** Arrays and objects nested deeper than this are refused before any domain code sees them. */
export const MAX_JSON_DEPTH = 32;

export function header(event: APIGatewayProxyEvent, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted && value !== undefined) return value;
  }
  return undefined;
}

export function rawBody(event: APIGatewayProxyEvent): Buffer {
  if (event.body === null || event.body === undefined) return Buffer.alloc(0);
  return event.isBase64Encoded ? Buffer.from(event.body, "base64") : Buffer.from(event.body, "utf8");
}

/** Media type without parameters, lower case (`application/json; charset=utf-8` → `application/json`). */
export function mediaType(event: APIGatewayProxyEvent): string | undefined {
  return header(event, "content-type")?.split(";")[0]?.trim().toLowerCase();
}

/** Size, content type and JSON syntax checks: 413, 415 and 400, never 500. */
export function parseJsonBody(event: APIGatewayProxyEvent, route: RouteDefinition): unknown {
  const bytes = rawBody(event);
  const limit = route.maxBodyBytes ?? DEFAULT_MAX_JSON_BODY_BYTES;
  if (bytes.length > limit) throw new PayloadTooLargeError(`Request body is larger than ${limit} bytes.`);
  if (bytes.length === 0) throw ValidationError.single("body", "a JSON object body is required");
  const type = mediaType(event);
  if (type !== "application/json" && !(type?.startsWith("application/") && type.endsWith("+json"))) {
    throw new UnsupportedMediaTypeError("application/json");
  }
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw ValidationError.single("body", "body is not valid JSON");
  }
  if (jsonDepth(body) > MAX_JSON_DEPTH) {
    throw ValidationError.single("body", `body must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`);
  }
  return body;
}

/**
 * Nesting depth of parsed JSON (a scalar 0, `[]` or `{}` 1), walked with an explicit stack: no
 * recursion, so a 1 MB body of `[` cannot overflow the call stack here. Stops early past the limit.
 */
export function jsonDepth(value: unknown, stopAbove = MAX_JSON_DEPTH): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop() as [unknown, number];
    if (typeof current !== "object" || current === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > stopAbove) return deepest;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === "object" && child !== null) pending.push([child, depth + 1]);
    }
  }
  return deepest;
}

/** API Gateway gives `null` for absent maps; schemas see `{}` instead. */
export function queryParameters(event: APIGatewayProxyEvent): Record<string, string> {
  return Object.fromEntries(Object.entries(event.queryStringParameters ?? {}).filter(([, v]) => v !== undefined)) as Record<string, string>;
}

/**
 * A query parameter given more than once (`?tag=a&tag=b`) is refused, naming it: API Gateway's
 * `queryStringParameters` keeps only the last value, which would silently drop the others. List
 * parameters take one comma-separated value (`?tag=a,b`).
 */
export function refuseRepeatedQueryParameters(event: APIGatewayProxyEvent): void {
  const repeated = Object.entries(event.multiValueQueryStringParameters ?? {}).filter(([, values]) => (values?.length ?? 0) > 1);
  if (repeated.length === 0) return;
  throw new ValidationError(
    repeated.map(([name]) => ({
      field: name,
      message: `${name} is given more than once; give it once (lists are comma-separated: ${name}=a,b)`,
    })),
  );
}

/** Path parameters arrive URL-decoded from API Gateway (REST) and from the local gateway. */
export function pathParameters(event: APIGatewayProxyEvent): Record<string, string> {
  return Object.fromEntries(
    Object.entries(event.pathParameters ?? {})
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, v as string]),
  );
}
