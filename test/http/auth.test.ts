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
    const token = mintToken(inject("signingKey"), { sub: "user-1", "custom:organizationId": newOrganizationId() } as never);
    expect((await apiClient(token).get("/vehicles")).status).toBe(200);
  });

  it("serves the OpenAPI document without a token", async () => {
    const response = await apiClient(undefined).get("/openapi.json");
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe("3.1.0");
  });
});
