import * as z from "zod/mini";

/**
 * The token issuers the tenant authorizer accepts: one or more, each with its audience and JWKS.
 * Several at once is how an issuer rotates without a cutover (docs/operations.md, "Rotating the token
 * issuer"): deploy with old and new listed, move the clients, deploy without the old one.
 *
 * On AWS the list reaches the authorizer as the `JWT_ISSUERS_JSON` environment variable, baked into
 * the template at synth from context: never a CloudFormation parameter, because the CDK CLI reuses a
 * deployed parameter's previous value and would silently ignore a changed `-c jwtIssuer=…`.
 */
export const maxJwtIssuers = 5;

const nonEmpty = z.string().check(z.minLength(1), z.maxLength(2048));
const jwkSchema = z.looseObject({ kty: z.string(), kid: z.optional(z.string()) });

export const jwtIssuerSchema = z.strictObject({
  /** The tokens' `iss`, exactly. */
  issuer: nonEmpty,
  /** The tokens' `aud` (with Cognito: the app client id; send ID tokens). */
  audience: nonEmpty,
  /** The issuer's JWKS URL (https). */
  jwksUri: z.url({ protocol: /^https?$/ }),
  /** Optional inline JWKS preloaded into the verifier (the local runtime and tests verify offline). */
  jwks: z.optional(z.object({ keys: z.array(jwkSchema) })),
});
export type JwtIssuer = z.infer<typeof jwtIssuerSchema>;

export const jwtIssuersSchema = z.array(jwtIssuerSchema).check(
  z.minLength(1, "list at least one issuer"),
  z.maxLength(maxJwtIssuers, `list at most ${maxJwtIssuers} issuers`),
  z.refine((issuers) => new Set(issuers.map((each) => each.issuer)).size === issuers.length, "each issuer may be listed once"),
);

/** Parses an issuers document (a JSON array); throws one readable line per problem. */
export function parseJwtIssuers(document: unknown, source: string): JwtIssuer[] {
  const parsed = jwtIssuersSchema.safeParse(document);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `  ${issue.path.map(String).join(".") || "(document)"}: ${issue.message}`);
  throw new Error(`${source} is not a list of token issuers ({ issuer, audience, jwksUri }):\n${problems.join("\n")}`);
}
