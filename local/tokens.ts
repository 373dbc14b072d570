import { createPrivateKey, createPublicKey, createSign, generateKeyPairSync, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The local identity provider: an RSA key pair kept under `.local/jwt/` (never committed), its
 * public half as a JWKS for the API's verifier, and RS256 token minting for the token CLI and tests.
 */
export interface SigningKey {
  kid: string;
  privateKeyPem: string;
  jwks: { keys: Array<Record<string, unknown>> };
}

export const localIssuer = "field-operations-local";
export const localAudience = "field-operations-api";

export function generateSigningKey(): SigningKey {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const kid = randomUUID();
  const publicJwk = createPublicKey(privateKey).export({ format: "jwk" });
  return {
    kid,
    privateKeyPem: privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
    jwks: { keys: [{ ...publicJwk, kid, alg: "RS256", use: "sig" }] },
  };
}

export function loadOrCreateSigningKey(directory: string): SigningKey {
  const file = join(directory, "signing-key.json");
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as SigningKey;
  mkdirSync(directory, { recursive: true });
  const key = generateSigningKey();
  writeFileSync(file, JSON.stringify(key), { mode: 0o600 });
  return key;
}

export interface TokenClaims {
  sub: string;
  organizationId: string;
  hubIds?: string[];
  permissions?: string[];
  permissionDetails?: Array<{ permissionName: string; dataTypeId?: string; hiddenFields?: string[] }>;
  [claim: string]: unknown;
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

export function mintToken(
  key: SigningKey,
  claims: TokenClaims,
  options: { issuer?: string; audience?: string; expiresInSeconds?: number; now?: Date } = {},
): string {
  const issuedAt = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const header = { alg: "RS256", typ: "JWT", kid: key.kid };
  const payload = {
    iss: options.issuer ?? localIssuer,
    aud: options.audience ?? localAudience,
    iat: issuedAt,
    exp: issuedAt + (options.expiresInSeconds ?? 12 * 3600),
    ...claims,
  };
  const signingInput = `${base64url(header)}.${base64url(payload)}`;
  const signature = createSign("RSA-SHA256").update(signingInput).sign(createPrivateKey(key.privateKeyPem)).toString("base64url");
  return `${signingInput}.${signature}`;
}
