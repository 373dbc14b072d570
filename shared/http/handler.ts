import middy, { type MiddlewareObj } from "@middy/core";
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from "aws-lambda";
import type { z, ZodType } from "zod";
import { AppError, type FieldIssue, MissingPermissionError, ValidationError } from "#shared/domain/errors";
import { authenticate } from "#shared/http/authenticate";
import type { Caller } from "#shared/domain/caller";
import { errorToHttpResult } from "#shared/http/error-response";
import { parseWith } from "#shared/domain/validation";
import { parseMultipartBody } from "#shared/http/multipart";
import { header, parseJsonBody, pathParameters, queryParameters } from "#shared/http/parse-request";
import { bearerChallenge, type HttpResult, platformHeaders, toProxyResult } from "#shared/http/responses";
import type { RouteDefinition } from "#shared/http/route";
import { logger } from "#shared/observability/logger";

export interface ApiRequest<TBody, TQuery, TParams> {
  caller: Caller;
  body: TBody;
  query: TQuery;
  params: TParams;
  event: APIGatewayProxyEvent;
}

type Infer<T> = T extends ZodType ? z.infer<T> : undefined;

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

/** One log line per request, with the request id and (once known) organization id on every line. */
const requestLogging = (route: RouteDefinition): ApiMiddleware => {
  let startedAt = 0;
  const finish = (status: number) => logger.info("request completed", { status, durationMs: Date.now() - startedAt });
  return {
    before: async (request) => {
      startedAt = Date.now();
      logger.setContext({ requestId: request.context.awsRequestId, operationId: route.operationId });
    },
    after: async (request) => finish(request.response?.statusCode ?? 0),
    // Runs before the error mapping (middy runs onError in reverse order): read the status without mapping twice.
    onError: async (request) => finish(request.error instanceof AppError ? request.error.statusCode : 500),
  };
};

/** Bearer token → Caller, then the route's permission (checked before anything is read). */
const authorization = (route: RouteDefinition): ApiMiddleware => ({
  before: async (request) => {
    if (route.auth === "none") return;
    const caller = await authenticate(header(request.event, "authorization"));
    logger.appendContext({ organizationId: caller.organizationId, userId: caller.userId });
    if (!caller.permissions.has(route.permission)) throw new MissingPermissionError(route.permission);
    request.context.caller = caller;
  },
});

/**
 * Builds the Lambda handler of one route: error mapping, logging, auth, then parsing and zod
 * validation of path, query and body, so `run` receives typed input and only calls the domain.
 */
export function httpHandler<TBody extends ZodType, TQuery extends ZodType, TParams extends ZodType>(
  route: RouteDefinition<TBody, TQuery, TParams>,
  run: (request: ApiRequest<Infer<TBody>, Infer<TQuery>, Infer<TParams>>) => Promise<HttpResult>,
) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>()
    .use(answerHeaders())
    .use(errorResponses())
    .use(requestLogging(route))
    .use(authorization(route))
    .handler(async (event, context) => {
      // Path, query and body are all checked before answering, so one 400 names every bad field.
      const issues: FieldIssue[] = [];
      const parsed = (schema: ZodType | undefined, read: () => unknown) => {
        if (!schema) return undefined;
        try {
          return parseWith(schema, read());
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          issues.push(...error.errors);
          return undefined;
        }
      };
      const readBody = route.bodyType === "multipart/form-data" ? parseMultipartBody : parseJsonBody;
      const params = parsed(route.params, () => pathParameters(event));
      const query = parsed(route.query, () => queryParameters(event));
      const body = parsed(route.body, () => readBody(event, route));
      if (issues.length > 0) throw new ValidationError(issues);
      const result = await run({
        caller: context.caller as Caller,
        body: body as Infer<TBody>,
        query: query as Infer<TQuery>,
        params: params as Infer<TParams>,
        event,
      });
      return toProxyResult(result);
    });
}
