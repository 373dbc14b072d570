import { afterEach, describe, expect, it, vi } from "vitest";
import { handler } from "#functions/authorizer/tenant-authorizer";
import { resetAppConfig } from "#shared/config/env";
import { authorizerFailureMessage, resetVerifier } from "#shared/http/authenticate";
import { logger } from "#shared/observability/powertools";

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
/** A well-formed RS256 token of the configured issuer and audience, signed by a key no JWKS has (the signature is never reached). */
const token = (issuer: string) =>
  [
    base64url({ alg: "RS256", kid: "unknown-key", typ: "JWT" }),
    base64url({ iss: issuer, aud: "field-operations-api", sub: "u1", exp: Math.floor(Date.now() / 1000) + 600 }),
    "c2lnbmF0dXJl",
  ].join(".");
const event = (authorization: string) =>
  ({ type: "REQUEST", methodArn: "arn:aws:execute-api:eu-west-1:1:api/v3/GET/hubs", headers: { Authorization: authorization } }) as never;

function configure(jwksUri: string) {
  process.env.JWT_ISSUER = "https://issuer.test";
  process.env.JWT_AUDIENCE = "field-operations-api";
  process.env.JWT_JWKS_URI = jwksUri;
  delete process.env.JWT_JWKS_JSON;
  resetAppConfig();
  resetVerifier();
}
afterEach(() => {
  vi.restoreAllMocks();
  for (const key of ["JWT_ISSUER", "JWT_AUDIENCE", "JWT_JWKS_URI"]) delete process.env[key];
  resetAppConfig();
  resetVerifier();
});

describe("the authorizer's own failures are told apart from bad tokens (AuthorizerFailures metric)", () => {
  it("a bad token answers 401 and logs no failure", async () => {
    configure("https://127.0.0.1:9/jwks.json");
    const errors = vi.spyOn(logger, "error");
    await expect(handler(event("Bearer not-a-jwt"))).rejects.toThrow("Unauthorized");
    await expect(handler(event("Basic abc"))).rejects.toThrow("Unauthorized");
    expect(errors.mock.calls.filter(([message]) => message === authorizerFailureMessage)).toEqual([]);
  });

  it("an unreachable JWKS still answers 401, and logs the authorizer failure the metric filter counts", async () => {
    // Port 9 (discard) on the loopback: nothing listens, the fetch is refused at once.
    configure("https://127.0.0.1:9/jwks.json");
    const errors = vi.spyOn(logger, "error");
    await expect(handler(event(`Bearer ${token("https://issuer.test")}`))).rejects.toThrow("Unauthorized");
    const failures = errors.mock.calls.filter(([message]) => message === authorizerFailureMessage);
    expect(failures).toHaveLength(1);
    expect(failures[0]?.[1]).toMatchObject({ cause: "jwks" });
  });
});
