/**
 * The JWT settings cdk.json ships: enough for an offline `cdk synth`, refused by the stack's Rule at
 * deploy time (a stack verifying tokens of example.com would refuse every call).
 */
export const placeholderJwt = {
  issuer: "https://issuer.example.com",
  audience: "field-operations-api",
  jwksUri: "https://issuer.example.com/.well-known/jwks.json",
} as const;
