import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { placeholderJwt } from "#infra/placeholders";
import { repositoryRoot } from "#infra/repository-root";
import { type JwtIssuer, parseJwtIssuers } from "#shared/config/jwt-issuers";

/**
 * The issuers a deploy accepts, from context: `jwtIssuersFile` (a JSON list, relative to the
 * repository; docs/operations.md, "Rotating the token issuer"), else the one issuer of `jwtIssuer`,
 * `jwtAudience` and `jwtJwksUri` (cdk.json's placeholders by default). Used by the stack and by
 * `npm run preflight`, so both check the same list. A deployed JWKS must be https.
 */
export function jwtIssuersFromContext(read: (key: string) => unknown): JwtIssuer[] {
  const text = (key: string, fallback: string) => {
    const value = read(key);
    return value === undefined || value === null ? fallback : String(value);
  };
  const file = text("jwtIssuersFile", "");
  const issuers =
    file !== ""
      ? parseJwtIssuers(JSON.parse(readFileSync(resolve(repositoryRoot, file), "utf8")), `jwtIssuersFile ${file}`)
      : parseJwtIssuers(
          [
            {
              issuer: text("jwtIssuer", placeholderJwt.issuer),
              audience: text("jwtAudience", placeholderJwt.audience),
              jwksUri: text("jwtJwksUri", placeholderJwt.jwksUri),
            },
          ],
          "jwtIssuer/jwtAudience/jwtJwksUri",
        );
  const insecure = issuers.filter((each) => !each.jwksUri.startsWith("https://"));
  if (insecure.length > 0) throw new Error(`jwksUri must be https:// on AWS: ${insecure.map((each) => each.jwksUri).join(", ")}`);
  // The authorizer fetches keys from the issuer; inline keys are for the local runtime only.
  return issuers.map(({ issuer, audience, jwksUri }) => ({ issuer, audience, jwksUri }));
}
