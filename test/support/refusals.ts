import { expect } from "vitest";
import type { ApiClient, ApiResponse } from "#test/support/local-api";

/**
 * A refused request, asserted whole: its status, the error envelope with its `failedCode`, and —
 * `unchanged`, the path of the resource it would have changed — that resource read the same before
 * and after (same status and body, version and updatedTime included): nothing was stored.
 */
export async function expectRefused(
  api: ApiClient,
  request: { method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"; path: string; body?: unknown },
  expected: { status: number; failedCode: string; unchanged?: string },
): Promise<ApiResponse> {
  const before = expected.unchanged === undefined ? undefined : await api.get(expected.unchanged);
  const response = await api.request(request.method, request.path, request.body === undefined ? {} : { body: request.body });
  expect(response.status, `${request.method} ${request.path}: ${JSON.stringify(response.body)}`).toBe(expected.status);
  expect(response.body, `${request.method} ${request.path}`).toMatchObject({ status: false, failedCode: expected.failedCode });
  expect(typeof response.body.message).toBe("string");
  if (before && expected.unchanged !== undefined) {
    const after = await api.get(expected.unchanged);
    expect({ status: after.status, body: after.body }, `${expected.unchanged} after the refused ${request.method}`).toEqual({
      status: before.status,
      body: before.body,
    });
  }
  return response;
}

/**
 * What an error answer says, for one-line assertions of a refusal in place of its bare status:
 * `expect(refusal(await api.get(path))).toEqual({ status: 404, failedCode: "hub-404" })`.
 * An answer without the error envelope shows `failedCode: undefined` (and `envelope: false`), so the assertion fails.
 */
export function refusal(response: Pick<ApiResponse, "status" | "body">): { status: number; failedCode: unknown; envelope?: false } {
  const body = response.body as { status?: unknown; failedCode?: unknown; message?: unknown } | undefined;
  const envelope = typeof body === "object" && body !== null && body.status === false && typeof body.message === "string";
  return { status: response.status, failedCode: envelope ? body.failedCode : undefined, ...(envelope ? {} : { envelope: false as const }) };
}

/**
 * What an S3 error answer says — its status and the XML `<Code>` — for answers of the bucket itself (a
 * form POST, a presigned or anonymous request), which carry S3's error document, not the API's envelope:
 * `expect(await s3Refusal(await fetch(url))).toEqual({ status: 403, code: "AccessDenied" })`.
 * A body without a Code shows whole as `code`, so the assertion fails with the answer in view.
 */
export async function s3Refusal(response: Response): Promise<{ status: number; code: string }> {
  const text = await response.text();
  return { status: response.status, code: /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ?? text };
}
