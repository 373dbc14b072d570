/**
 * The answers API Gateway gives itself when the tenant authorizer or a usage plan stops a request,
 * in the product's error shape. The CDK stack turns them into gateway responses and the local
 * gateway answers them verbatim, so a client sees the same status, body and headers on both.
 * ACCESS_DENIED and QUOTA_EXCEEDED take their message (and 403 its failedCode) from the
 * authorizer's context.
 */
export const gatewayAnswers = {
  unauthorized: { statusCode: 401, message: "Missing, invalid or expired bearer token.", failedCode: "sys-401" },
  accessDenied: { statusCode: 403, message: "Forbidden", failedCode: "sys-403" },
  throttled: { statusCode: 429, message: "Too many requests.", failedCode: "sys-429" },
  quotaExceeded: { statusCode: 429, message: "Call quota exceeded.", failedCode: "sys-429-quota" },
  invalidApiKey: {
    statusCode: 403,
    message: "The organization's API key is not on a usage plan: ask the operator to check its enrollment.",
    failedCode: "tenant-403-key",
  },
} as const;

/**
 * Retry-After of the gateway's 429s (a gateway response's headers are fixed values): a throttled
 * call may succeed within a second (the token bucket refills at the plan's rate); a call over its
 * quota not before the period ends, so clients are told to come back in an hour (the message says when it resets).
 */
export const gatewayRetryAfterSeconds = { throttled: 1, quotaExceeded: 3600 } as const;

/** The WWW-Authenticate value of the gateway's 401 (a gateway response's headers are fixed values). */
export const gatewayBearerChallenge = "Bearer";
