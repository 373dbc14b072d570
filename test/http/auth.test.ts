import { createSign, generateKeyPairSync } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { mintToken } from "#local/tokens";
import { apiClient, newOrganizationId, tokenFor } from "#test/support/local-api";

const expectUnauthorized = (response: { status: number; body: any }) => {
  expect(response.status).toBe(401);
  expect(response.body).toMatchObject({ status: false, failedCode: "sys-401" });
  expect(typeof response.body.message).toBe("string");
};

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
const claims = (organizationId: string) => ({
  sub: "user-1",
  organizationId,
  iss: "field-operations-local",
  aud: "field-operations-api",
  iat: Math.floor(Date.now() / 1000),
  exp: Math.floor(Date.now() / 1000) + 600,
});

describe("Authentication (every endpoint but the OpenAPI document needs a valid bearer token)", () => {
  it("accepts a valid token", async () => {
    const response = await apiClient(tokenFor({ organizationId: newOrganizationId() })).get("/vehicles");
    expect(response.status).toBe(200);
  });

  it("rejects a request without a token", async () => {
    expectUnauthorized(await apiClient(undefined).get("/vehicles"));
  });

  it("rejects a non-bearer authorization header", async () => {
    expectUnauthorized(await apiClient(undefined).request("GET", "/vehicles", { headers: { authorization: "Basic dXNlcjpwYXNz" } }));
  });

  it("rejects a malformed token", async () => {
    expectUnauthorized(await apiClient("not.a.jwt").get("/vehicles"));
  });

  it("rejects an expired token", async () => {
    const token = tokenFor({ organizationId: newOrganizationId() }, { now: new Date(Date.now() - 3_600_000), expiresInSeconds: 60 });
    expectUnauthorized(await apiClient(token).get("/vehicles"));
  });

  it("rejects a token signed by another key with the same kid (forged)", async () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const header = { alg: "RS256", typ: "JWT", kid: inject("signingKey").kid };
    const input = `${b64(header)}.${b64(claims(newOrganizationId()))}`;
    const signature = createSign("RSA-SHA256").update(input).sign(privateKey).toString("base64url");
    expectUnauthorized(await apiClient(`${input}.${signature}`).get("/vehicles"));
  });

  it("rejects a token whose payload was altered after signing", async () => {
    const [header, , signature] = tokenFor({ organizationId: newOrganizationId() }).split(".");
    const tampered = `${header}.${b64(claims("someone-elses-org"))}.${signature}`;
    expectUnauthorized(await apiClient(tampered).get("/vehicles"));
  });

  it("rejects alg:none", async () => {
    const token = `${b64({ alg: "none", typ: "JWT", kid: inject("signingKey").kid })}.${b64(claims(newOrganizationId()))}.`;
    expectUnauthorized(await apiClient(token).get("/vehicles"));
  });

  it("rejects a wrong issuer", async () => {
    const token = tokenFor({ organizationId: newOrganizationId() }, { issuer: "https://evil.example" });
    expectUnauthorized(await apiClient(token).get("/vehicles"));
  });

  it("rejects a wrong audience", async () => {
    const token = tokenFor({ organizationId: newOrganizationId() }, { audience: "another-api" });
    expectUnauthorized(await apiClient(token).get("/vehicles"));
  });

  it("rejects a token without an organization", async () => {
    const token = mintToken(inject("signingKey"), { sub: "user-1" } as never);
    expectUnauthorized(await apiClient(token).get("/vehicles"));
  });

  it("accepts the Cognito-style custom:organizationId claim", async () => {
    const token = mintToken(inject("signingKey"), {
      sub: "user-1",
      "custom:organizationId": newOrganizationId(),
      permissions: ["view/vehicle"],
    } as never);
    expect((await apiClient(token).get("/vehicles")).status).toBe(200);
  });

  it("serves the OpenAPI document without a token", async () => {
    const response = await apiClient(undefined).get("/openapi.json");
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe("3.1.0");
  });
});

describe("Token lifetime (exp required, nothing issued in the future, at most JWT_MAX_LIFETIME_SECONDS)", () => {
  const nowSeconds = () => Math.floor(Date.now() / 1000);
  const signed = (payload: Record<string, unknown>) => {
    const key = inject("signingKey");
    const input = `${b64({ alg: "RS256", typ: "JWT", kid: key.kid })}.${b64(payload)}`;
    return `${input}.${createSign("RSA-SHA256").update(input).sign(key.privateKeyPem).toString("base64url")}`;
  };
  const base = () => ({
    sub: "user-1",
    organizationId: newOrganizationId(),
    iss: "field-operations-local",
    aud: "field-operations-api",
    permissions: ["view/vehicle"],
  });

  it("accepts a token living 24 h and one issued a few seconds ahead of the server clock", async () => {
    expect((await apiClient(signed({ ...base(), iat: nowSeconds(), exp: nowSeconds() + 24 * 3600 })).get("/vehicles")).status).toBe(200);
    expect(
      (await apiClient(signed({ ...base(), iat: nowSeconds() + 20, nbf: nowSeconds() + 20, exp: nowSeconds() + 600 })).get("/vehicles"))
        .status,
    ).toBe(200);
  });

  it("rejects a token without exp", async () => {
    expectUnauthorized(await apiClient(signed({ ...base(), iat: nowSeconds() })).get("/vehicles"));
    expectUnauthorized(await apiClient(signed(base())).get("/vehicles"));
  });

  it("rejects a token issued a day in the future", async () => {
    expectUnauthorized(
      await apiClient(signed({ ...base(), iat: nowSeconds() + 86_400, exp: nowSeconds() + 86_400 + 600 })).get("/vehicles"),
    );
  });

  it("rejects a token valid only from a day in the future (nbf)", async () => {
    expectUnauthorized(
      await apiClient(signed({ ...base(), iat: nowSeconds(), nbf: nowSeconds() + 86_400, exp: nowSeconds() + 3600 })).get("/vehicles"),
    );
  });

  it("rejects a token living longer than 24 h (exp − iat, or exp − now without iat)", async () => {
    expectUnauthorized(await apiClient(signed({ ...base(), iat: nowSeconds(), exp: nowSeconds() + 24 * 3600 + 120 })).get("/vehicles"));
    expectUnauthorized(await apiClient(signed({ ...base(), iat: nowSeconds() - 3600, exp: nowSeconds() + 23.5 * 3600 })).get("/vehicles"));
    expectUnauthorized(await apiClient(signed({ ...base(), exp: nowSeconds() + 10 * 365 * 86_400 })).get("/vehicles"));
  });
});
