import { Agent, request as httpRequest } from "node:http";

/**
 * The fuzzer's HTTP client, used both by the vitest file and by `npm run fuzz` (so no vitest
 * `inject` here). node:http rather than fetch: fetch refuses a body on GET and DELETE, and the
 * fuzzer sends one there too.
 */
export interface SentRequest {
  method: string;
  /** Path and query below the base URL, already encoded. */
  target: string;
  headers: Array<[string, string]>;
  body?: Buffer;
}

export interface Answer {
  status: number;
  text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 4 });

export function send(baseUrl: string, request: SentRequest): Promise<Answer> {
  const url = new URL(`${baseUrl}${request.target}`);
  const headers: Record<string, string[]> = Object.create(null);
  for (const [name, value] of request.headers) {
    const key = name.toLowerCase();
    headers[key] = [...(headers[key] ?? []), value];
  }
  if (request.body) headers["content-length"] = [String(request.body.length)];
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: url.hostname, port: url.port, method: request.method, path: `${url.pathname}${url.search}`, headers, agent: keepAlive },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
        incoming.on("error", reject);
        incoming.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: incoming.statusCode ?? 0, text, json });
        });
      },
    );
    outgoing.on("error", reject);
    outgoing.end(request.body);
  });
}

/** A JSON client for fixture setup: any answer other than `expected` throws with the body. */
export function jsonClient(baseUrl: string, token: string) {
  const call = async (method: string, path: string, body?: unknown): Promise<Answer> =>
    send(baseUrl, {
      method,
      target: path,
      headers: [
        ["authorization", `Bearer ${token}`],
        ...(body === undefined ? [] : ([["content-type", "application/json"]] as Array<[string, string]>)),
      ],
      body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
    });
  return {
    call,
    async expect(method: string, path: string, expected: number, body?: unknown): Promise<any> {
      const answer = await call(method, path, body);
      if (answer.status !== expected) throw new Error(`fixture ${method} ${path} answered ${answer.status}: ${answer.text.slice(0, 500)}`);
      return answer.json;
    },
  };
}
