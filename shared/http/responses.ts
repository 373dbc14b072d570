import type { APIGatewayProxyResult } from "aws-lambda";

/** Success bodies are `{ status: true, message, …payload }` (payload key is `data` unless the spec names another). */
export interface HttpResult {
  statusCode: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

export function success(statusCode: number, message: string, payload: Record<string, unknown>): HttpResult {
  return { statusCode, body: { status: true, message, ...payload } };
}

export const ok = (message: string, data: unknown, extra: Record<string, unknown> = {}): HttpResult =>
  success(200, message, { data, ...extra });

export const created = (message: string, data: unknown): HttpResult => success(201, message, { data });

export function toProxyResult(result: HttpResult): APIGatewayProxyResult {
  return {
    statusCode: result.statusCode,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...result.headers },
    body: JSON.stringify(result.body),
  };
}
