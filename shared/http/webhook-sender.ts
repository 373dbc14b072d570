import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { addressClass, isDisallowedAddress } from "#shared/domain/data-types/provider-url";
import { type AttemptResult, ATTEMPT_TIMEOUT_MS, classifyAnswer } from "#shared/domain/webhooks/delivery";
import { webhookUrlProblem } from "#shared/domain/webhooks/service";
import { checkedLookup } from "#shared/http/external-provider";

/**
 * One delivery attempt: POST the body with its signed headers. The SSRF rules of external-api
 * data types hold at send time too (the URL re-checked, the address the socket connects to
 * checked in the DNS lookup hook); redirects are not followed (a 3xx is a failed attempt); the
 * whole exchange has `timeoutMs` (≤ 10 s); the answer's body is drained, never read.
 */
export function sendWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  allowLoopback: boolean,
  timeoutMs = ATTEMPT_TIMEOUT_MS,
): Promise<AttemptResult> {
  const problem = webhookUrlProblem(url, allowLoopback);
  if (problem) return Promise.resolve({ kind: "failed", status: null, reason: `the URL ${problem}` });
  const target = new URL(url);
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
  if (addressClass(host) !== undefined && isDisallowedAddress(host, { allowLoopback }))
    return Promise.resolve({ kind: "failed", status: null, reason: "the address is not allowed" });
  return new Promise<AttemptResult>((resolve) => {
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const request = send(
      target,
      {
        method: "POST",
        headers: {
          ...headers,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body).toString(),
          "user-agent": "field-operations-webhooks/1",
        },
        lookup: checkedLookup(allowLoopback),
      },
      (response: IncomingMessage) => {
        response.resume();
        response.on("end", () => resolve(classifyAnswer(response.statusCode ?? 0)));
        response.on("error", () => resolve({ kind: "failed", status: response.statusCode ?? null, reason: "the answer was interrupted" }));
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      resolve({ kind: "failed", status: null, reason: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    request.on("close", () => clearTimeout(timer));
    request.on("error", (error: NodeJS.ErrnoException) =>
      resolve({
        kind: "failed",
        status: null,
        reason: error.code === "EDISALLOWED" ? "the address is not allowed" : "the connection failed",
      }),
    );
    request.end(body);
  });
}
