import { AppError, ServiceUnavailableError, TooManyRequestsError } from "#shared/domain/errors";
import { logger } from "#shared/observability/powertools";
import type { HttpResult } from "#shared/http/responses";

export const INTERNAL_ERROR_MESSAGE = "Internal server error, please contact support.";

/**
 * The one place errors become HTTP bodies: typed AppErrors keep their status, message, failedCode
 * and details; anything else is a 500 that is logged in full and answered without internals.
 */
export function errorToHttpResult(error: unknown): HttpResult {
  if (error instanceof AppError) {
    return {
      statusCode: error.statusCode,
      body: { status: false, message: error.message, failedCode: error.failedCode, ...error.details() },
      ...(error instanceof TooManyRequestsError
        ? { headers: { "retry-after": String(Math.max(1, Math.ceil(error.retryAfterSeconds))) } }
        : {}),
      ...(error instanceof ServiceUnavailableError ? { headers: { "retry-after": String(error.retryAfterSeconds) } } : {}),
    };
  }
  logger.error("unhandled error", { error });
  return { statusCode: 500, body: { status: false, message: INTERNAL_ERROR_MESSAGE, failedCode: "sys-500" } };
}
