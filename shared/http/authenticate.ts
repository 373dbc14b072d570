import { JwtVerifier } from "aws-jwt-verify";
import type { Jwks } from "aws-jwt-verify/jwk";
import { appConfig } from "#shared/config/env";
import { UnauthorizedError } from "#shared/domain/errors";
import { type Caller, callerFromClaims } from "#shared/domain/caller";
import { logger } from "#shared/observability/powertools";

type Verifier = ReturnType<typeof createVerifier>;

function createVerifier() {
  const config = appConfig();
  const verifier = JwtVerifier.create({
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    jwksUri: config.JWT_JWKS_URI,
  });
  if (config.JWT_JWKS_JSON) verifier.cacheJwks(JSON.parse(config.JWT_JWKS_JSON) as Jwks);
  return verifier;
}

/** Module scope: created on the first request, then reused with its JWKS cache while the function is warm. */
let verifier: Verifier | undefined;

export function resetVerifier(): void {
  verifier = undefined;
}

/**
 * Verifies the bearer token (RS256 signature against the JWKS, issuer, audience, expiry; `alg: none`
 * and unknown keys are rejected by aws-jwt-verify) and turns its claims into a Caller.
 */
export async function authenticate(authorizationHeader: string | undefined): Promise<Caller> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorizationHeader ?? "");
  if (!match?.[1]) throw new UnauthorizedError("Missing bearer token.");
  verifier ??= createVerifier();
  let payload: unknown;
  try {
    payload = await verifier.verify(match[1]);
  } catch (error) {
    logger.info("token rejected", { reason: error instanceof Error ? error.name : "unknown" });
    throw new UnauthorizedError("Invalid or expired token.");
  }
  const caller = callerFromClaims(payload);
  if (!caller) throw new UnauthorizedError("Token claims are incomplete.");
  return caller;
}
