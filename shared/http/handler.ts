import middy, { type MiddlewareObj } from "@middy/core";
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from "aws-lambda";
import type { core } from "zod/mini";
import {
  AppError,
  type FieldIssue,
  MissingPermissionError,
  PreconditionFailedError,
  UnauthorizedError,
  ValidationError,
} from "#shared/domain/errors";
import { callerFromAuthorizerContext } from "#shared/http/authorizer-context";
import { type Caller, clockSkewSeconds } from "#shared/domain/caller";
import { errorToHttpResult } from "#shared/http/error-response";
import { parseWith } from "#shared/domain/validation";
import { header, parseJsonBody, pathParameters, queryParameters, refuseRepeatedQueryParameters } from "#shared/http/parse-request";
import { bearerChallenge, type HttpResult, platformHeaders, toProxyResult } from "#shared/http/responses";
import type { RouteDefinition } from "#shared/http/route";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { logger } from "#shared/observability/powertools";
import { formatETag, parseIfMatch, VersionCondition } from "#shared/domain/versions";
import { IDEMPOTENCY_KEY_HEADER, parseIdempotencyKey } from "#shared/http/idempotency-key";
import type { answerIdempotently, SecretFreeAnswer } from "#shared/http/idempotency";
import { withInvocationDeadline } from "#shared/store/retry-budget";
import { appConfig } from "#shared/config/env";

export interface ApiRequest<TBody, TQuery, TParams> {
  caller: Caller;
  body: TBody;
  query: TQuery;
  params: TParams;
  event: APIGatewayProxyEvent;
  /** The request's If-Match and the version it ends on (answered as ETag on `versioned` routes). */
  versions: VersionCondition;
}

type Infer<T> = T extends core.$ZodType ? core.output<T> : undefined;

type ApiContext = Context & { caller?: Caller };
type ApiMiddleware = MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>;

/**
 * Registered first so its after and onError run last, once the answer (success or mapped error) is
 * set: every answer carries the request id and CORS headers, and a 401 its bearer challenge.
 */
const answerHeaders = (): ApiMiddleware => {
  const decorate: NonNullable<ApiMiddleware["after"]> = async (request) => {
    if (!request.response) return;
    const headers = platformHeaders(request.context.awsRequestId, header(request.event, "origin"));
    if (request.response.statusCode === 401) headers["www-authenticate"] = bearerChallenge(header(request.event, "authorization"));
    request.response.headers = { ...request.response.headers, ...headers };
  };
  return { after: decorate, onError: decorate };
};

/** Registered right after answerHeaders so its onError runs before it: every error leaves as `{ status: false, … }`. */
const errorResponses = (): ApiMiddleware => ({
  onError: async (request) => {
    const result = errorToHttpResult(request.error);
    request.response = toProxyResult(result);
  },
});

/**
 * No line for a request that went well: the API Gateway access log already has every request's
 * status, latency, organization and trace id (docs/operations.md), and a line per call was most of
 * the log bytes the API wrote. What the access log cannot say is logged, with the invocation's keys
 * (operationId, then organizationId and userId): a failed request (5xx: `request failed`, ERROR,
 * with its failedCode), a slow one (`slow request`, WARN, over SLOW_REQUEST_MS), and at DEBUG
 * every request's received and completed lines. No custom metrics: API Gateway's
 * Count/4XXError/5XXError/Latency and each function's (one per operation) Lambda metrics already
 * say what an operator acts on, at no metric cost.
 */
const requestLogging = (route: RouteDefinition): ApiMiddleware => {
  const startedAt = new WeakMap<object, number>();
  const finish = (request: object, status: number, failedCode?: string) => {
    const durationMs = Date.now() - (startedAt.get(request) ?? Date.now());
    if (status >= 500) logger.error("request failed", { status, durationMs, failedCode });
    else if (durationMs >= appConfig().SLOW_REQUEST_MS) logger.warn("slow request", { status, durationMs });
    else logger.debug("request completed", { status, durationMs });
  };
  return {
    before: async (request) => {
      startedAt.set(request, Date.now());
      logger.appendKeys({ operationId: route.operationId });
      logger.debug("request received", { httpMethod: request.event.httpMethod, path: request.event.path });
    },
    after: async (request) => finish(request, request.response?.statusCode ?? 0),
    // Runs before the error mapping (middy runs onError in reverse order): read the status without mapping twice.
    onError: async (request) =>
      request.error instanceof AppError
        ? finish(request, request.error.statusCode, request.error.failedCode)
        : finish(request, 500, "sys-500"),
  };
};

/**
 * The caller the tenant authorizer verified (its context, in front of every authenticated method on
 * AWS and in the local gateway), then the route's permission (checked before anything is read).
 */
const authorization = (route: RouteDefinition): ApiMiddleware => ({
  before: async (request) => {
    if (route.auth === "none") return;
    const caller = callerFromAuthorizerContext(request.event.requestContext?.authorizer);
    if (!caller) throw new UnauthorizedError("Invalid or expired token.");
    // API Gateway serves a cached authorization for its whole TTL, also once the token has expired:
    // the token's exp travels in the context and is checked here, with the authorizer's clock skew.
    if (caller.expiresAt === undefined || caller.expiresAt + clockSkewSeconds <= Date.now() / 1000)
      throw new UnauthorizedError("Invalid or expired token.");
    logger.appendKeys({ organizationId: caller.organizationId, userId: caller.userId });
    if (!caller.permissions.has(route.permission)) throw new MissingPermissionError(route.permission);
    request.context.caller = caller;
  },
});

/** Reads a request body before validation (JSON, or multipart/form-data). */
export type BodyReader = (event: APIGatewayProxyEvent, route: RouteDefinition) => unknown;

export interface HttpHandlerOptions {
  /**
   * The multipart/form-data parser, passed by the handlers of multipart routes only
   * (`parseMultipartBody`), so busboy is bundled into those functions and no other.
   */
  readMultipart?: BodyReader;
  /**
   * The idempotency runner (`answerIdempotently` from #shared/http/idempotency), passed by the
   * handlers of `idempotent` routes only, so Powertools' idempotency utility is bundled (and loaded
   * at cold start) into those functions and no other.
   */
  answerIdempotently?: typeof answerIdempotently;
  /**
   * For idempotent routes whose answer carries a secret (a presigned URL, a signing secret): how the
   * stored answer leaves it out and a replay gets a fresh one (see answerIdempotently).
   */
  secretFree?: (caller: Caller) => SecretFreeAnswer;
}

/**
 * Builds the Lambda handler of one route: Powertools context and metrics, error mapping, logging, auth, then parsing and zod
 * validation of path, query and body, so `run` receives typed input and only calls the domain.
 */
export function httpHandler<TBody extends core.$ZodType, TQuery extends core.$ZodType, TParams extends core.$ZodType>(
  route: RouteDefinition<TBody, TQuery, TParams>,
  run: (request: ApiRequest<Infer<TBody>, Infer<TQuery>, Infer<TParams>>) => Promise<HttpResult>,
  options: HttpHandlerOptions = {},
) {
  const readBody = route.bodyType === "multipart/form-data" ? options.readMultipart : parseJsonBody;
  // Fails when the module loads (every test and the local gateway load it), never on a request.
  if (!readBody)
    throw new Error(
      `${route.operationId}: a multipart/form-data route's handler passes { readMultipart: parseMultipartBody } (#shared/http/multipart)`,
    );
  const runIdempotently = options.answerIdempotently;
  if (route.idempotent && !runIdempotently)
    throw new Error(`${route.operationId}: an idempotent route's handler passes { answerIdempotently } (#shared/http/idempotency)`);
  const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>()
    // Outermost, so the unhandled-error line still carries the invocation's keys.
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(answerHeaders())
    .use(errorResponses())
    .use(requestLogging(route))
    .use(authorization(route))
    .handler(async (event, context) => {
      // Path, query and body are all checked before answering, so one 400 names every bad field.
      const issues: FieldIssue[] = [];
      const parsed = (schema: core.$ZodType | undefined, read: () => unknown) => {
        if (!schema) return undefined;
        try {
          return parseWith(schema, read());
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          issues.push(...error.errors);
          return undefined;
        }
      };
      const params = parsed(route.params, () => pathParameters(event));
      const query = parsed(route.query, () => queryParameters(event));
      const body = parsed(route.body, () => readBody(event, route));
      const checkedHeader = <T>(read: () => T) => {
        try {
          return read();
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          issues.push(...error.errors);
          return undefined;
        }
      };
      checkedHeader(() => refuseRepeatedQueryParameters(event));
      const writes = route.method !== "GET";
      const versions = new VersionCondition(
        route.versioned && writes ? checkedHeader(() => parseIfMatch(header(event, "if-match"))) : undefined,
      );
      const idempotencyKey = route.idempotent ? checkedHeader(() => parseIdempotencyKey(header(event, IDEMPOTENCY_KEY_HEADER))) : undefined;
      if (issues.length > 0)
        throw new ValidationError(issues, issues.some((issue) => issue.field === IDEMPOTENCY_KEY_HEADER) ? "idem-400" : undefined);
      const answer = async () => {
        let result: HttpResult;
        try {
          result = await run({
            caller: context.caller as Caller,
            body: body as Infer<TBody>,
            query: query as Infer<TQuery>,
            params: params as Infer<TParams>,
            event,
            versions,
          });
        } catch (error) {
          if (versions.failedOnMissing(error))
            throw new PreconditionFailedError("The resource does not exist, so no If-Match can match it.");
          throw error;
        }
        if (route.versioned && versions.version !== undefined) result.headers = { ...result.headers, etag: formatETag(versions.version) };
        return toProxyResult(result);
      };
      if (!route.idempotent || idempotencyKey === undefined || !runIdempotently) return answer();
      const caller = context.caller as Caller;
      return runIdempotently(
        {
          organizationId: caller.organizationId,
          operationId: route.operationId,
          key: idempotencyKey,
          caller,
          request: { params, query, body },
          context,
          ...(route.idempotencyWindowSeconds !== undefined ? { windowSeconds: route.idempotencyWindowSeconds } : {}),
          ...(options.secretFree ? { secretFree: options.secretFree(caller) } : {}),
        },
        answer,
      );
    });
  // Contention retries spend at most what the invocation has left (shared/store/retry-budget.ts).
  return (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> =>
    withInvocationDeadline(context, () => handler(event, context as ApiContext));
}
