import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { addressClass, isDisallowedAddress, providerUrlProblem } from "#shared/domain/data-types/provider-url";
import { UpstreamError } from "#shared/domain/records/errors";
import type { ExternalRecordSource } from "#shared/domain/records/service";

/**
 * Reads the items of an external-api data type: one GET of `providerConfig.url` with the key as
 * the `Authorization` header value (sent as stored), 5 s timeout for the whole exchange, at most
 * 1 MB of body, redirects refused (3xx is an error). SSRF: the URL is re-checked as at save time,
 * and the address the socket actually connects to is checked in the DNS lookup hook (so a name
 * that resolves to a loopback, link-local or private address is refused, including after a
 * rebind); literal IPs are checked directly. The answer must be JSON: an array of items, or an
 * object whose `data` is one.
 */
export const EXTERNAL_TIMEOUT_MS = 5_000;
export const EXTERNAL_MAX_BYTES = 1024 * 1024;

export interface ExternalProviderOptions {
  /** Test-only (ALLOW_LOOPBACK_PROVIDERS): admits loopback addresses, never private ones. */
  allowLoopback: () => boolean;
  timeoutMs?: number;
  maxBytes?: number;
}

/** DNS lookup hook of the request: refuses a name whose addresses include a disallowed one. */
export function checkedLookup(allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, "", 4);
      const refused = addresses.find((entry) => isDisallowedAddress(entry.address, { allowLoopback }));
      if (refused || addresses.length === 0) {
        return callback(Object.assign(new Error(`address ${refused?.address ?? "(none)"} is not allowed`), { code: "EDISALLOWED" }), "", 4);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
}

export function createExternalProvider(options: ExternalProviderOptions): ExternalRecordSource {
  const timeoutMs = options.timeoutMs ?? EXTERNAL_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? EXTERNAL_MAX_BYTES;
  return {
    async fetchItems(config) {
      const allowLoopback = options.allowLoopback();
      const problem = providerUrlProblem(config.url, { allowLoopback });
      if (problem) throw new UpstreamError(`the URL ${problem}`);
      const url = new URL(config.url);
      const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
      if (addressClass(host) !== undefined && isDisallowedAddress(host, { allowLoopback }))
        throw new UpstreamError("the address is not allowed");
      const body = await new Promise<Buffer>((resolve, reject) => {
        const send = url.protocol === "https:" ? httpsRequest : httpRequest;
        const request = send(
          url,
          {
            method: "GET",
            headers: { accept: "application/json", ...(config.key !== undefined ? { authorization: config.key } : {}) },
            lookup: checkedLookup(allowLoopback),
          },
          (response: IncomingMessage) => {
            const status = response.statusCode ?? 0;
            if (status >= 300 && status < 400) {
              response.resume();
              return reject(new UpstreamError(`it answered a redirect (${status}); redirects are not followed`));
            }
            if (status < 200 || status >= 300) {
              response.resume();
              return reject(new UpstreamError(`it answered HTTP ${status}`));
            }
            const chunks: Buffer[] = [];
            let size = 0;
            response.on("data", (chunk: Buffer) => {
              size += chunk.length;
              if (size > maxBytes) {
                request.destroy();
                reject(new UpstreamError(`its answer is larger than ${maxBytes} bytes`));
                return;
              }
              chunks.push(chunk);
            });
            response.on("end", () => resolve(Buffer.concat(chunks)));
            response.on("error", () => reject(new UpstreamError("the answer was interrupted")));
          },
        );
        const timer = setTimeout(() => {
          request.destroy();
          reject(new UpstreamError(`no complete answer within ${timeoutMs} ms`));
        }, timeoutMs);
        request.on("close", () => clearTimeout(timer));
        request.on("error", (error: NodeJS.ErrnoException) =>
          reject(
            error instanceof UpstreamError
              ? error
              : new UpstreamError(error.code === "EDISALLOWED" ? "the address is not allowed" : "the connection failed"),
          ),
        );
        request.end();
      });
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString("utf8"));
      } catch {
        throw new UpstreamError("its answer is not JSON");
      }
      const items = Array.isArray(parsed) ? parsed : (parsed as { data?: unknown } | null)?.data;
      if (!Array.isArray(items)) throw new UpstreamError("its answer is neither an array nor an object with a data array");
      return items;
    },
  };
}
