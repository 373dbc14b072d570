import { randomUUID } from "node:crypto";
import { inject } from "vitest";
import { mintToken, type TokenClaims } from "#local/tokens";
import { permissionSlugs } from "#functions/routes";

/**
 * HTTP helpers for tests that go through the local gateway, exactly as a client of `npm start`.
 * Each test creates its own organization id, so tests never see each other's data.
 */
// A file under strict DynamoDB semantics has its own gateway (test/support/strict-dynamodb.ts).
export const baseUrl = () => process.env.TEST_API_BASE_URL ?? inject("baseUrl");

export function newOrganizationId(): string {
  return `org-${randomUUID()}`;
}

export function tokenFor(claims: Partial<TokenClaims> & { organizationId: string }, options?: Parameters<typeof mintToken>[2]): string {
  return mintToken(inject("signingKey"), { sub: "user-1", permissions: [...permissionSlugs], ...claims }, options);
}

export interface ApiResponse {
  status: number;
  body: any;
  headers: Headers;
}

export interface ApiClient {
  request(
    method: string,
    path: string,
    options?: { body?: unknown; rawBody?: string | Uint8Array; headers?: Record<string, string> },
  ): Promise<ApiResponse>;
  get(path: string): Promise<ApiResponse>;
  post(path: string, body?: unknown): Promise<ApiResponse>;
  put(path: string, body?: unknown): Promise<ApiResponse>;
  patch(path: string, body?: unknown): Promise<ApiResponse>;
  delete(path: string): Promise<ApiResponse>;
}

/** A client authenticated as `token` (or anonymous when undefined). Paths are relative to /v3. */
export function apiClient(token: string | undefined): ApiClient {
  const request: ApiClient["request"] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | Uint8Array | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] ??= "application/json";
    }
    const response = await fetch(`${baseUrl()}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed, headers: response.headers };
  };
  return {
    request,
    get: (path) => request("GET", path),
    post: (path, body) => request("POST", path, { body }),
    put: (path, body) => request("PUT", path, { body }),
    patch: (path, body) => request("PATCH", path, { body }),
    delete: (path) => request("DELETE", path),
  };
}

/** A fresh organization with a client holding every permission. */
export function newTenant(claims: Partial<TokenClaims> = {}) {
  const organizationId = newOrganizationId();
  return { organizationId, api: apiClient(tokenFor({ organizationId, ...claims })) };
}
