import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { permissionSlugs } from "#functions/routes";
import { afterAll, beforeAll, expect } from "vitest";
import { type LocalStack, type LocalStackOptions, startLocalStack } from "#local/stack";
import { generateSigningKey, mintToken, type SigningKey } from "#local/tokens";

/**
 * For test files that run a stack of their own (`startLocalStack`, with the stream publisher and the
 * delivery worker) and subscribe webhooks to a receiver on loopback (`WEBHOOKS_ALLOW_LOOPBACK`).
 */
export interface ReceivedDelivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** When it arrived (Date.now()). */
  at: number;
}

/**
 * An HTTP receiver on 127.0.0.1 that records every request. It answers 200, or the statuses
 * scripted for a path, consumed in order (`scripted.set("/flaky", [500, 503])`: two failures, then 200).
 */
export function webhookReceiver() {
  const received: ReceivedDelivery[] = [];
  const scripted = new Map<string, number[]>();
  let server: Server | undefined;
  let url = "";
  return {
    received,
    scripted,
    /** `http://127.0.0.1:<port>` once started. */
    get url() {
      return url;
    },
    async start(): Promise<string> {
      const listening = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on("data", (chunk: Buffer) => chunks.push(chunk));
        request.on("end", () => {
          const path = request.url ?? "/";
          received.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
          response.writeHead(scripted.get(path)?.shift() ?? 200).end();
        });
      });
      server = listening;
      await new Promise<void>((ready) => listening.listen(0, "127.0.0.1", () => ready()));
      url = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
      return url;
    },
    async close(): Promise<void> {
      const closing = server;
      server = undefined;
      if (closing) await new Promise<void>((closed) => closing.close(() => closed()));
    },
  };
}

/** A file's own in-memory stack with its background workers (run worker, stream publisher, deliveries). */
export function startOwnStack(signingKey: SigningKey, options: Partial<LocalStackOptions> = {}): Promise<LocalStack> {
  return startLocalStack({
    port: 0,
    inMemory: true,
    stateDirectory: "",
    signingKey,
    runScheduler: true,
    onBackgroundError: () => undefined,
    ...options,
  });
}

type Json = any;
export type StackCall = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: Json }>;

/** A JSON client of such a stack, with a token of every permission unless `claims` narrows it. */
export function stackClient(
  stack: () => LocalStack,
  signingKey: SigningKey,
  organizationId: string,
  claims: { sub?: string; hubIds?: string[]; permissions?: string[] } = {},
): StackCall {
  const token = mintToken(signingKey, {
    sub: claims.sub ?? "user-1",
    organizationId,
    permissions: claims.permissions ?? [...permissionSlugs],
    ...(claims.hubIds ? { hubIds: claims.hubIds } : {}),
  });
  return async (method, path, body) => {
    const response = await fetch(`${stack().baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
}

/**
 * A file's own stack (startOwnStack) and webhook receiver, started before the file's tests and stopped
 * after them (the hooks are registered here, so call it at the top of the file). `client` makes a JSON
 * client of the stack for an organization, as `sub` unless `claims` says otherwise.
 */
export function ownStackWithReceiver(options: { sub?: string; stack?: Partial<LocalStackOptions> } = {}) {
  const receiver = webhookReceiver();
  const signingKey = generateSigningKey();
  let running: LocalStack | undefined;
  const stack = (): LocalStack => {
    if (!running) throw new Error("the file's stack is not running (ownStackWithReceiver starts it in beforeAll)");
    return running;
  };
  beforeAll(async () => {
    await receiver.start();
    running = await startOwnStack(signingKey, options.stack);
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
    await receiver.close();
  });
  return {
    receiver,
    stack,
    client: (organizationId: string, claims: { sub?: string; hubIds?: string[]; permissions?: string[] } = {}): StackCall =>
      stackClient(stack, signingKey, organizationId, { sub: options.sub ?? "user-1", ...claims }),
  };
}

/** POSTs a create to such a stack and answers the created resource (201 asserted). */
export async function createdOn(call: StackCall, path: string, body: unknown) {
  const answer = await call("POST", path, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.data;
}

/** Polls `probe` every `everyMs` until it answers something; fails naming `what` after `timeoutMs`. */
export async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
