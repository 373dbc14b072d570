import { JwtVerifier } from "aws-jwt-verify";
import type { Jwks } from "aws-jwt-verify/jwk";
import { FetchError, JwksNotAvailableInCacheError, JwksValidationError, NonRetryableFetchError } from "aws-jwt-verify/error";
import { type AppConfig, appConfig } from "#shared/config/env";
import { type JwtIssuer, parseJwtIssuers } from "#shared/config/jwt-issuers";
import { UnauthorizedError } from "#shared/domain/errors";
import { type Caller, callerFromClaims, clockSkewSeconds } from "#shared/domain/caller";
import { logger } from "#shared/observability/powertools";
import { authorizerFailureMessage } from "#shared/http/authorizer-failure";

type Verifier = ReturnType<typeof createVerifier>;

/** JWT_ISSUERS_JSON when set (the stack's list), else the one issuer of JWT_ISSUER/JWT_AUDIENCE/JWT_JWKS_URI (the local runtime's). */
export function acceptedIssuers(config: AppConfig): JwtIssuer[] {
  if (config.JWT_ISSUERS_JSON) return parseJwtIssuers(JSON.parse(config.JWT_ISSUERS_JSON), "JWT_ISSUERS_JSON");
  return [
    {
      issuer: config.JWT_ISSUER,
      audience: config.JWT_AUDIENCE,
      jwksUri: config.JWT_JWKS_URI,
      ...(config.JWT_JWKS_JSON ? { jwks: JSON.parse(config.JWT_JWKS_JSON) as NonNullable<JwtIssuer["jwks"]> } : {}),
    },
  ];
}

/** One verifier for every accepted issuer: aws-jwt-verify picks the issuer's audience and JWKS by the token's `iss`. */
function createVerifier() {
  const issuers = acceptedIssuers(appConfig());
  const verifier = JwtVerifier.create(
    // exp and nbf tolerate the same clock skew as tokenTimeProblem's iat rule
    issuers.map(({ issuer, audience, jwksUri }) => ({ issuer, audience, jwksUri, graceSeconds: clockSkewSeconds })),
  );
  for (const { issuer, jwks } of issuers) if (jwks) verifier.cacheJwks(jwks as Jwks, issuer);
  return verifier;
}

export { authorizerFailureMessage };
/** aws-jwt-verify's errors for a JWKS it could not fetch or read (not a token's fault); by class, since bundles are minified. */
const jwksFetchErrors = [FetchError, NonRetryableFetchError, JwksNotAvailableInCacheError, JwksValidationError];

/** Module scope: created on the first request, then reused with its JWKS cache while the function is warm. */
let verifier: Verifier | undefined;

export function resetVerifier(): void {
  verifier = undefined;
}

export { clockSkewSeconds };

/**
 * The time rules aws-jwt-verify leaves out (it checks `exp` and `nbf` only when present): a token
 * must expire, must not be issued or become valid in the future (beyond the clock skew), and may
 * live at most `maxLifetimeSeconds` — so a leaked token is never good forever. Returns the broken
 * rule, or undefined.
 */
export function tokenTimeProblem(
  payload: { exp?: unknown; iat?: unknown; nbf?: unknown },
  nowSeconds: number,
  maxLifetimeSeconds: number,
): string | undefined {
  const seconds = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : undefined);
  const expiresAt = seconds(payload.exp);
  const issuedAt = seconds(payload.iat);
  const notBefore = seconds(payload.nbf);
  if (expiresAt === undefined) return "no exp";
  if (payload.iat !== undefined && issuedAt === undefined) return "iat is not a number";
  if (payload.nbf !== undefined && notBefore === undefined) return "nbf is not a number";
  if (issuedAt !== undefined && issuedAt > nowSeconds + clockSkewSeconds) return "iat in the future";
  if (notBefore !== undefined && notBefore > nowSeconds + clockSkewSeconds) return "nbf in the future";
  if (expiresAt - (issuedAt ?? nowSeconds) > maxLifetimeSeconds) return "lifetime too long";
  return undefined;
}

/**
 * Verifies the bearer token (RS256 signature against the JWKS, issuer, audience, expiry; `alg: none`
 * and unknown keys are rejected by aws-jwt-verify), then its time rules (tokenTimeProblem), and
 * turns its claims into a Caller.
 */
export async function authenticate(authorizationHeader: string | undefined): Promise<Caller> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorizationHeader ?? "");
  if (!match?.[1]) throw new UnauthorizedError("Missing bearer token.");
  verifier ??= createVerifier();
  let payload: unknown;
  try {
    payload = await verifier.verify(match[1]);
  } catch (error) {
    // The issuer's JWKS could not be fetched: every token fails, which is the authorizer's failure, not the callers'.
    if (jwksFetchErrors.some((kind) => error instanceof kind))
      logger.error(authorizerFailureMessage, { cause: "jwks", detail: (error as Error).message });
    else logger.info("token rejected", { reason: error instanceof Error ? error.name : "unknown" });
    throw new UnauthorizedError("Invalid or expired token.");
  }
  const timeProblem = tokenTimeProblem(payload as Record<string, unknown>, Date.now() / 1000, appConfig().JWT_MAX_LIFETIME_SECONDS);
  if (timeProblem) {
    logger.info("token rejected", { reason: timeProblem });
    throw new UnauthorizedError("Invalid or expired token.");
  }
  const caller = callerFromClaims(payload);
  if (!caller) throw new UnauthorizedError("Token claims are incomplete.");
  return caller;
}
