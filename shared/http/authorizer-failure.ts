/**
 * The log line of the tenant authorizer's own failures (an unreachable JWKS, a tenant store error),
 * never of a bad token: the stack counts it as the metric `AuthorizerFailures` (a metric filter on
 * the authorizer's log group; alarm `AuthorizerFailure`).
 */
export const authorizerFailureMessage = "authorizer failure";
