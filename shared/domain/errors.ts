/**
 * Typed errors: domain code throws these, and one middleware (`errorResponses` in shared/http/handler.ts, through shared/http/error-response.ts) maps
 * them to HTTP responses. `failedCode` is `<module>-<NNN>` and appears on every error body.
 */
export interface FieldIssue {
  /** Dotted path of the offending field, e.g. `capacity.weight.max` or `fields.2.type`. */
  field: string;
  /** The rule that failed, in words a client developer understands. */
  message: string;
}

export abstract class AppError extends Error {
  abstract readonly statusCode: number;
  constructor(
    message: string,
    readonly failedCode: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
  /** Extra keys merged into the error body (e.g. `errors`, `restrictedFields`). */
  details(): Record<string, unknown> {
    return {};
  }
}

export const BAD_REQUEST_MESSAGE = "Bad request - invalid parameters provided.";

export class ValidationError extends AppError {
  readonly statusCode = 400;
  constructor(
    readonly errors: FieldIssue[],
    failedCode = "sys-400",
  ) {
    super(BAD_REQUEST_MESSAGE, failedCode);
  }
  static single(field: string, message: string, failedCode?: string): ValidationError {
    return new ValidationError([{ field, message }], failedCode);
  }
  override details(): Record<string, unknown> {
    return { errors: this.errors };
  }
}

export class UnauthorizedError extends AppError {
  readonly statusCode = 401;
  constructor(message = "Unauthorized", failedCode = "sys-401") {
    super(message, failedCode);
  }
}

export class ForbiddenError extends AppError {
  readonly statusCode = 403;
  constructor(
    message: string,
    failedCode: string,
    private readonly extra: Record<string, unknown> = {},
  ) {
    super(message, failedCode);
  }
  override details(): Record<string, unknown> {
    return this.extra;
  }
}

/** The caller lacks the permission slug a route requires (spec: routing schedules answer sys-035). */
export class MissingPermissionError extends ForbiddenError {
  constructor(readonly permission: string) {
    super(`You do not have the permission "${permission}" required for this action.`, "sys-035");
  }
}

export class NotFoundError extends AppError {
  readonly statusCode = 404;
  constructor(failedCode = "sys-404") {
    super("Data not found", failedCode);
  }
}

export class ConflictError extends AppError {
  readonly statusCode = 409;
  constructor(message: string, failedCode = "sys-409") {
    super(message, failedCode);
  }
}

export class PayloadTooLargeError extends AppError {
  readonly statusCode = 413;
  constructor(message = "Request body is too large.", failedCode = "sys-413") {
    super(message, failedCode);
  }
}

/** Too much at once for the caller's organization (e.g. the cap on active routing runs): retry later. */
/** A 429; `retryAfterSeconds` becomes its Retry-After header (a hint: when trying again may succeed). */
export class TooManyRequestsError extends AppError {
  readonly statusCode = 429;
  constructor(
    message: string,
    failedCode = "sys-429",
    readonly retryAfterSeconds = 60,
  ) {
    super(message, failedCode);
  }
}

/**
 * The service could not finish in time for reasons that are not the client's (DynamoDB contention
 * retried until the invocation's budget ran out); nothing was changed. Answered with Retry-After.
 */
export class ServiceUnavailableError extends AppError {
  readonly statusCode = 503;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    failedCode = "sys-503",
  ) {
    super(message, failedCode);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  readonly statusCode = 415;
  constructor(expected: string, failedCode = "sys-415") {
    super(`Unsupported content type: expected ${expected}.`, failedCode);
  }
}

/** The request's precondition (If-Match) does not hold for the resource's current version. */
export class PreconditionFailedError extends AppError {
  readonly statusCode = 412;
  constructor(
    message = "The resource has changed since the version named in If-Match; read it again (GET returns its ETag) and retry.",
    failedCode = "sys-412",
  ) {
    super(message, failedCode);
  }
}

/** Well-formed but cannot be processed as sent (e.g. an Idempotency-Key reused with a different request). */
export class UnprocessableContentError extends AppError {
  readonly statusCode = 422;
  constructor(message: string, failedCode = "sys-422") {
    super(message, failedCode);
  }
}
