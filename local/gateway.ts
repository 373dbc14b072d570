import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { resolve } from "node:path";
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from "aws-lambda";
import { INTERNAL_ERROR_MESSAGE } from "#shared/http/error-response";
import { corsPreflightHeaders, platformHeaders } from "#shared/http/responses";
import { invokeHandler } from "#local/invocation";
import { binaryMediaTypes, type RouteDefinition } from "#shared/http/route";
import { gatewayAnswers, gatewayBearerChallenge, gatewayRetryAfterSeconds } from "#shared/http/gateway-responses";
import { defaultAuthorizerCacheTtlSeconds } from "#shared/domain/tenants/access";
import { authorizerEntry, LocalAuthorizer } from "#local/authorizer";
import type { LocalUsagePlans } from "#local/usage-plans";

/**
 * A local stand-in for API Gateway (REST API, proxy integration): matches the request against the
 * route table, builds the same `APIGatewayProxyEvent` API Gateway would, invokes the route's real
 * handler module and writes its result back. Like API Gateway it ignores a trailing slash,
 * base64-encodes binary media types and refuses bodies over 10 MB.
 */
type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

interface CompiledRoute {
  route: RouteDefinition;
  pattern: RegExp;
  parameterNames: string[];
}

function compile(route: RouteDefinition): CompiledRoute {
  const parameterNames: string[] = [];
  const source = route.path
    .split("/")
    .map((segment) => {
      const parameter = /^\{(\w+)\}$/.exec(segment);
      if (!parameter?.[1]) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      parameterNames.push(parameter[1]);
      return "([^/]+)";
    })
    .join("/");
  return { route, pattern: new RegExp(`^${source}$`), parameterNames };
}

function json(response: ServerResponse, statusCode: number, body: unknown, headers: Record<string, string>): void {
  response.writeHead(statusCode, { "content-type": "application/json; charset=utf-8", ...headers });
  response.end(JSON.stringify(body));
}

const routeNotFound = { status: false, message: "Route not found", failedCode: "sys-404" };

async function readBody(request: IncomingMessage): Promise<Buffer | "too-large"> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_PAYLOAD_BYTES) return "too-large";
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** `rawHeaders` is a flat `[name, value, name, value …]` list. */
function* pairs(flat: readonly string[]): Generator<[string, string]> {
  for (let i = 0; i + 1 < flat.length; i += 2) yield [flat[i] as string, flat[i + 1] as string];
}

/**
 * API Gateway's single- and multi-value maps (the last value wins in the single-value one). Built on
 * null-prototype objects: client-chosen names such as `constructor`, `toString` or `__proto__` are
 * plain keys, not Object.prototype's members.
 */
function multiValueMaps(entries: Iterable<[string, string]>): {
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
} {
  const headers: Record<string, string> = Object.create(null);
  const multiValueHeaders: Record<string, string[]> = Object.create(null);
  for (const [name, value] of entries) {
    headers[name] = value;
    const values = multiValueHeaders[name] ?? [];
    values.push(value);
    multiValueHeaders[name] = values;
  }
  return { headers, multiValueHeaders };
}

/** Path parameters, percent-decoded; undefined when an escape is malformed (a client mistake: 400). */
function decodePathParameters(names: readonly string[], match: RegExpExecArray): Record<string, string> | undefined {
  try {
    const parameters: Record<string, string> = Object.create(null);
    names.forEach((name, i) => {
      parameters[name] = decodeURIComponent(match[i + 1] ?? "");
    });
    return parameters;
  } catch {
    return undefined;
  }
}

export interface GatewayOptions {
  routes: readonly RouteDefinition[];
  /** Stage path, e.g. `/v3`. */
  basePath: string;
  /** Directory the route table's handler paths are relative to. */
  rootDirectory: string;
  /** The tenant authorizer in front of every authenticated route (default: the real one, results cached 300 s). */
  authorizer?: LocalAuthorizer;
  /** Usage plans (throttle and call quota per tenant); none: unlimited, nothing counted. */
  usagePlans?: LocalUsagePlans;
  /** Told of every answer to a request that reached a route (the suites check them against the route table's failedCodes). */
  observe?: (observation: RouteAnswer) => void;
}

/** What a route answered: its operationId, the status and, for an error body, its failedCode. */
export interface RouteAnswer {
  operationId: string;
  status: number;
  failedCode?: string;
}

/** The failedCode of a JSON error body, if it is one. */
function failedCodeOf(body: string | undefined): string | undefined {
  if (!body) return undefined;
  try {
    const parsed = JSON.parse(body) as { failedCode?: unknown };
    return typeof parsed?.failedCode === "string" ? parsed.failedCode : undefined;
  } catch {
    return undefined;
  }
}

/** The gateway's server; `forgetHandlers` makes the next request to each route import its handler module again. */
export type GatewayServer = Server & { forgetHandlers(): void };

export function createGateway(options: GatewayOptions): GatewayServer {
  const compiled = options.routes.map(compile);
  const authorizer =
    options.authorizer ??
    new LocalAuthorizer({ modulePath: resolve(options.rootDirectory, authorizerEntry), cacheTtlSeconds: defaultAuthorizerCacheTtlSeconds });
  const handlers = new Map<string, Promise<ProxyHandler>>();
  const loadHandler = (route: RouteDefinition): Promise<ProxyHandler> => {
    let loaded = handlers.get(route.handler);
    if (!loaded) {
      loaded = import(resolve(options.rootDirectory, route.handler)).then((module: { handler: ProxyHandler }) => module.handler);
      handlers.set(route.handler, loaded);
    }
    return loaded;
  };

  /** API Gateway's order: route match, body, path parameters, the authorizer and usage plan, then the integration. */
  async function handle(exchange: Exchange): Promise<void> {
    const { request, response, requestId, origin, answer } = exchange;
    const url = new URL(request.url ?? "/", "http://localhost");
    const matched = matchRoute(compiled, options.basePath, url.pathname, request.method);
    if (matched.kind === "not-found") return answer(404, routeNotFound);
    if (matched.kind === "preflight") {
      // API Gateway's CORS preflight (a mock integration on every resource): 204, no body.
      response.writeHead(204, { ...platformHeaders(requestId, origin), ...corsPreflightHeaders });
      response.end();
      return;
    }
    if (matched.kind === "method-not-allowed") {
      return answer(405, { status: false, message: "Method not allowed", failedCode: "sys-405" }, { allow: matched.allowed.join(", ") });
    }
    const { entry, match, resourcePath } = matched;
    const { route } = entry;
    exchange.operationId = route.operationId;
    const body = await readBody(request);
    if (body === "too-large") return answer(413, { status: false, message: "Request body is too large.", failedCode: "sys-413" });
    const pathParameters = decodePathParameters(entry.parameterNames, match);
    if (!pathParameters) {
      return answer(400, {
        status: false,
        message: "Bad request - invalid parameters provided.",
        failedCode: "sys-400",
        errors: [{ field: "path", message: "the path has a malformed percent-encoding" }],
      });
    }
    const parts = requestParts(request, url, route, resourcePath, pathParameters, options.basePath, requestId);
    const admitted = route.auth === "none" ? { context: null } : await admit(parts, exchange);
    if (!admitted) return;
    await integrate(proxyEvent(parts, request, body, admitted.context), route, exchange);
  }

  /** The tenant authorizer, then the usage plan: the caller's context, or undefined once refused (the answer is sent). */
  async function admit(parts: RequestParts, exchange: Exchange): Promise<{ context: Record<string, string> } | undefined> {
    const { route, stage, resourcePath } = parts;
    const outcome = await authorizer.authorize({
      methodArn: `arn:aws:execute-api:us-east-1:000000000000:local/${stage}/${route.method}${resourcePath}`,
      resource: route.path,
      path: resourcePath,
      httpMethod: route.method,
      headers: parts.headers,
      multiValueHeaders: parts.multiValueHeaders,
      pathParameters: parts.pathParameters,
      queryStringParameters: parts.queryStringParameters,
      multiValueQueryStringParameters: parts.multiValueQueryStringParameters,
      stageVariables: null,
      requestContext: parts.requestContext,
    } as never);
    if (outcome.kind === "unauthorized") {
      const { statusCode, message, failedCode } = gatewayAnswers.unauthorized;
      exchange.answer(statusCode, { status: false, message, failedCode }, { "www-authenticate": gatewayBearerChallenge });
      return undefined;
    }
    if (outcome.kind === "denied") {
      const { statusCode, message, failedCode } = gatewayAnswers.accessDenied;
      exchange.answer(statusCode, {
        status: false,
        message: outcome.context.message ?? message,
        failedCode: outcome.context.failedCode ?? failedCode,
      });
      return undefined;
    }
    if (options.usagePlans && outcome.context.organizationId && outcome.context.plan) {
      const admission = await options.usagePlans.admit(outcome.context.organizationId, outcome.context.plan);
      if (!admission.admitted) {
        const retryAfter =
          admission.body.failedCode === gatewayAnswers.quotaExceeded.failedCode
            ? gatewayRetryAfterSeconds.quotaExceeded
            : gatewayRetryAfterSeconds.throttled;
        exchange.answer(admission.statusCode, admission.body, { "retry-after": String(retryAfter) });
        return undefined;
      }
    }
    return { context: { ...outcome.context, principalId: outcome.principalId } };
  }

  /** The route's handler, invoked as Lambda would, and its result written back. */
  async function integrate(event: APIGatewayProxyEvent, route: RouteDefinition, exchange: Exchange): Promise<void> {
    const startedAt = Date.now();
    const context = {
      awsRequestId: exchange.requestId,
      functionName: route.operationId,
      functionVersion: "$LATEST",
      memoryLimitInMB: "256",
      callbackWaitsForEmptyEventLoop: true,
      getRemainingTimeInMillis: () => 29_000 - (Date.now() - startedAt),
    } as unknown as Context;
    const handler = await loadHandler(route);
    const result = await invokeHandler(handler, event, context);
    const responseHeaders: Record<string, string | string[]> = Object.assign(Object.create(null), result.headers);
    for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) responseHeaders[name] = values.map(String);
    exchange.observe(result.statusCode, result.statusCode >= 400 && !result.isBase64Encoded ? failedCodeOf(result.body) : undefined);
    exchange.response.writeHead(result.statusCode, responseHeaders);
    exchange.response.end(result.isBase64Encoded ? Buffer.from(result.body, "base64") : result.body);
  }

  const server = createServer(async (request, response) => {
    const exchange = newExchange(request, response, options.observe);
    try {
      await handle(exchange);
    } catch (error) {
      failIntegration(exchange, error);
    }
  });
  return Object.assign(server, { forgetHandlers: () => handlers.clear() });
}

/** One request and its answer: the request id, the origin, and the route once matched (for `observe`). */
interface Exchange {
  request: IncomingMessage;
  response: ServerResponse;
  /** One id per request: the invocation's awsRequestId and the event's requestContext.requestId, as in AWS. */
  requestId: string;
  origin: string | undefined;
  operationId: string | undefined;
  observe(status: number, failedCode: string | undefined): void;
  /** The gateway's own JSON answer, with what the handlers' answers carry: the request id and CORS headers. */
  answer(statusCode: number, body: unknown, extra?: Record<string, string>): void;
}

function newExchange(request: IncomingMessage, response: ServerResponse, observer: GatewayOptions["observe"]): Exchange {
  const exchange: Exchange = {
    request,
    response,
    requestId: randomUUID(),
    origin: request.headers.origin,
    operationId: undefined,
    observe: (status, failedCode) => {
      const { operationId } = exchange;
      if (operationId !== undefined) observer?.({ operationId, status, ...(failedCode !== undefined ? { failedCode } : {}) });
    },
    answer: (statusCode, body, extra = {}) => {
      exchange.observe(statusCode, (body as { failedCode?: string } | undefined)?.failedCode);
      json(response, statusCode, body, { ...platformHeaders(exchange.requestId, exchange.origin), ...extra });
    },
  };
  return exchange;
}

type RouteMatch =
  | { kind: "not-found" }
  | { kind: "preflight" }
  | { kind: "method-not-allowed"; allowed: string[] }
  | { kind: "route"; entry: CompiledRoute; match: RegExpExecArray; resourcePath: string };

/** The route a path and method name (API Gateway ignores a trailing slash), or why none answers. */
function matchRoute(compiled: readonly CompiledRoute[], basePath: string, pathname: string, method: string | undefined): RouteMatch {
  if (!pathname.startsWith(`${basePath}/`)) return { kind: "not-found" };
  const resourcePath = pathname.slice(basePath.length).replace(/\/+$/, "") || "/";
  const candidates = compiled
    .map((entry) => ({ entry, match: entry.pattern.exec(resourcePath) }))
    .filter((candidate) => candidate.match !== null);
  if (candidates.length === 0) return { kind: "not-found" };
  if (method === "OPTIONS") return { kind: "preflight" };
  const chosen = candidates.find((candidate) => candidate.entry.route.method === method);
  if (!chosen?.match) {
    return { kind: "method-not-allowed", allowed: [...new Set(candidates.map((candidate) => candidate.entry.route.method)), "OPTIONS"] };
  }
  return { kind: "route", entry: chosen.entry, match: chosen.match, resourcePath };
}

/** What the authorizer's event and the proxy event share. */
interface RequestParts {
  route: RouteDefinition;
  stage: string;
  resourcePath: string;
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
  pathParameters: Record<string, string> | null;
  queryStringParameters: Record<string, string> | null;
  multiValueQueryStringParameters: Record<string, string[]> | null;
  requestContext: Record<string, unknown>;
}

function requestParts(
  request: IncomingMessage,
  url: URL,
  route: RouteDefinition,
  resourcePath: string,
  pathParameters: Record<string, string>,
  basePath: string,
  requestId: string,
): RequestParts {
  const { headers, multiValueHeaders } = multiValueMaps(pairs(request.rawHeaders));
  const { headers: query, multiValueHeaders: multiValueQuery } = multiValueMaps(url.searchParams);
  const stage = basePath.slice(1);
  return {
    route,
    stage,
    resourcePath,
    headers,
    multiValueHeaders,
    pathParameters: Object.keys(pathParameters).length ? pathParameters : null,
    queryStringParameters: Object.keys(query).length ? query : null,
    multiValueQueryStringParameters: Object.keys(multiValueQuery).length ? multiValueQuery : null,
    requestContext: {
      accountId: "000000000000",
      apiId: "local",
      stage,
      requestId,
      httpMethod: route.method,
      path: url.pathname,
      resourcePath: route.path,
      resourceId: route.operationId,
      protocol: "HTTP/1.1",
      requestTimeEpoch: Date.now(),
      identity: { sourceIp: request.socket.remoteAddress ?? "127.0.0.1", userAgent: request.headers["user-agent"] ?? null },
    },
  };
}

/** The proxy integration's event; binary media types arrive base64-encoded, as API Gateway sends them. */
function proxyEvent(
  parts: RequestParts,
  request: IncomingMessage,
  body: Buffer,
  authorizerContext: Record<string, string> | null,
): APIGatewayProxyEvent {
  const contentType = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  const isBinary = (binaryMediaTypes as readonly string[]).includes(contentType);
  return {
    resource: parts.route.path,
    path: parts.resourcePath,
    httpMethod: parts.route.method,
    headers: parts.headers,
    multiValueHeaders: parts.multiValueHeaders,
    queryStringParameters: parts.queryStringParameters,
    multiValueQueryStringParameters: parts.multiValueQueryStringParameters,
    pathParameters: parts.pathParameters,
    stageVariables: null,
    body: body.length === 0 ? null : isBinary ? body.toString("base64") : body.toString("utf8"),
    isBase64Encoded: isBinary && body.length > 0,
    requestContext: { ...parts.requestContext, authorizer: authorizerContext },
  } as unknown as APIGatewayProxyEvent;
}

/** What the stack's DEFAULT_5XX gateway response answers when the integration itself fails. */
function failIntegration(exchange: Exchange, error: unknown): void {
  const { response, requestId, origin } = exchange;
  process.stderr.write(`local gateway: request failed: ${(error as Error).stack ?? String(error)}\n`);
  if (response.headersSent) {
    response.end();
    return;
  }
  let headers: Record<string, string> = { "x-request-id": requestId };
  try {
    headers = platformHeaders(requestId, origin);
  } catch {
    // A configuration error (e.g. a malformed CORS_ALLOWED_ORIGINS) must not stop this answer.
  }
  exchange.observe(500, "sys-500");
  json(response, 500, { status: false, message: INTERNAL_ERROR_MESSAGE, failedCode: "sys-500" }, headers);
}
