import type { APIGatewayProxyEvent } from "aws-lambda";
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from "#shared/domain/errors";
import type { RouteDefinition } from "#shared/http/route";

export const DEFAULT_MAX_JSON_BODY_BYTES = 1024 * 1024;

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
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch {
    throw ValidationError.single("body", "body is not valid JSON");
  }
}

/** API Gateway gives `null` for absent maps; schemas see `{}` instead. */
export function queryParameters(event: APIGatewayProxyEvent): Record<string, string> {
  return Object.fromEntries(Object.entries(event.queryStringParameters ?? {}).filter(([, v]) => v !== undefined)) as Record<
    string,
    string
  >;
}

/** Path parameters arrive URL-decoded from API Gateway (REST) and from the local gateway. */
export function pathParameters(event: APIGatewayProxyEvent): Record<string, string> {
  return Object.fromEntries(
    Object.entries(event.pathParameters ?? {})
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, v as string]),
  );
}
