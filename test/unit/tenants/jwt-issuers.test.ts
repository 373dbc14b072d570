import { afterEach, describe, expect, it } from "vitest";
import { generateSigningKey, mintToken, type SigningKey } from "#local/tokens";
import { resetAppConfig } from "#shared/config/env";
import { parseJwtIssuers } from "#shared/config/jwt-issuers";
import { authenticate, resetVerifier } from "#shared/http/authenticate";

/** Three identity providers, each with its own signing key; the authorizer is configured with the first two. `.invalid` (RFC 6761): a key fetch fails at once, offline or not. */
const providers = ["https://old.issuer.invalid", "https://new.issuer.invalid", "https://stranger.issuer.invalid"].map((issuer) => ({
  issuer,
  audience: `api-of-${new URL(issuer).hostname}`,
  jwksUri: `${issuer}/.well-known/jwks.json`,
  key: generateSigningKey(),
}));
const [oldIssuer, newIssuer, stranger] = providers as [(typeof providers)[0], (typeof providers)[0], (typeof providers)[0]];

const tokenOf = (provider: { issuer: string; audience: string }, key: SigningKey, organizationId = "org-1") =>
  `Bearer ${mintToken(key, { sub: "u1", organizationId, permissions: ["view/hub"] }, { issuer: provider.issuer, audience: provider.audience, expiresInSeconds: 600 })}`;

function accept(issuers: ReadonlyArray<(typeof providers)[0]>) {
  process.env.JWT_ISSUERS_JSON = JSON.stringify(
    issuers.map(({ issuer, audience, jwksUri, key }) => ({ issuer, audience, jwksUri, jwks: key.jwks })),
  );
  resetAppConfig();
  resetVerifier();
}
afterEach(() => {
  delete process.env.JWT_ISSUERS_JSON;
  resetAppConfig();
  resetVerifier();
});

describe("Issuer rotation: the authorizer accepts every configured issuer during the overlap, and only those", () => {
  it("accepts tokens of two configured issuers and refuses a third", async () => {
    accept([oldIssuer, newIssuer]);
    await expect(authenticate(tokenOf(oldIssuer, oldIssuer.key, "org-old"))).resolves.toMatchObject({ organizationId: "org-old" });
    await expect(authenticate(tokenOf(newIssuer, newIssuer.key, "org-new"))).resolves.toMatchObject({ organizationId: "org-new" });
    await expect(authenticate(tokenOf(stranger, stranger.key))).rejects.toThrow("Invalid or expired token.");
  });

  it("checks each token against its own issuer's audience and keys", async () => {
    accept([oldIssuer, newIssuer]);
    // the new issuer's name, signed with the old issuer's key
    await expect(authenticate(tokenOf(newIssuer, oldIssuer.key))).rejects.toThrow("Invalid or expired token.");
    // the old issuer, carrying the new issuer's audience
    await expect(authenticate(tokenOf({ issuer: oldIssuer.issuer, audience: newIssuer.audience }, oldIssuer.key))).rejects.toThrow(
      "Invalid or expired token.",
    );
  });

  it("after the overlap, the old issuer's tokens are refused", async () => {
    accept([newIssuer]);
    await expect(authenticate(tokenOf(newIssuer, newIssuer.key))).resolves.toMatchObject({ organizationId: "org-1" });
    await expect(authenticate(tokenOf(oldIssuer, oldIssuer.key))).rejects.toThrow("Invalid or expired token.");
  });

  it("refuses an issuers document that is not a list of issuers, naming the problem", () => {
    expect(() => parseJwtIssuers([{ issuer: "https://a", audience: "", jwksUri: "https://a/keys" }], "doc")).toThrow(/0\.audience/);
    expect(() => parseJwtIssuers([{ issuer: "https://a", audience: "x", jwksUri: "not a url" }], "doc")).toThrow(/0\.jwksUri/);
    expect(() =>
      parseJwtIssuers(
        Array.from({ length: 6 }, (_, index) => ({ issuer: `https://i${index}`, audience: "x", jwksUri: "https://k" })),
        "doc",
      ),
    ).toThrow(/at most 5/);
  });
});
