import * as z from "zod/mini";

/**
 * The authenticated caller, built only from verified token claims (docs/api/README.md, Authentication). The
 * organization never comes from the path, the query or the body.
 */
const permissionDetailSchema = z.looseObject({
  permissionName: z.string(),
  dataTypeId: z.optional(z.string()),
  hiddenFields: z.optional(z.array(z.string())),
});

/**
 * A hub-restricted token lists at most this many hubs: lists filter on them with one DynamoDB
 * `IN (…)`, which takes at most 100 values, so a longer list would silently hide resources.
 */
export const MAX_TOKEN_HUBS = 100;

/**
 * Organization and user ids from tokens become parts of DynamoDB keys (`ORG#<org>#…`, at most 2 KB
 * per partition key), log fields and S3 prefixes: 1–128 printable ASCII characters from a set with
 * no key separator (`#`), no `/`, no spaces and no controls. Covers UUIDs, Cognito subs, e-mail
 * addresses and `provider|id` subjects. Anything else is a token the API cannot serve: 401.
 */
export const TOKEN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@+=|-]{0,127}$/;
const tokenId = z.string().check(z.regex(TOKEN_ID_PATTERN));
/** Hub ids a token lists: the same characters, up to the length of any id the API stores. */
const tokenHubId = z.string().check(z.regex(/^[A-Za-z0-9._:@+=|-]{1,64}$/));

export const tokenClaimsSchema = z
  .looseObject({
    sub: tokenId,
    organizationId: z.optional(tokenId),
    "custom:organizationId": z.optional(tokenId),
    exp: z.optional(z.number()),
    hubIds: z.optional(z.array(tokenHubId).check(z.maxLength(MAX_TOKEN_HUBS))),
    permissions: z.optional(z.array(z.string())),
    permissionDetails: z.optional(z.array(permissionDetailSchema)),
  })
  .check(
    z.refine((claims) => claims.organizationId ?? claims["custom:organizationId"], {
      message: "token carries no organizationId",
    }),
  );

export type PermissionDetail = z.infer<typeof permissionDetailSchema>;

export interface Caller {
  userId: string;
  organizationId: string;
  /** Hubs the caller may work in; empty means the token does not restrict hubs. */
  hubIds: string[];
  permissions: ReadonlySet<string>;
  permissionDetails: PermissionDetail[];
  /** The token's `exp` (seconds since the epoch): functions re-check it, as API Gateway may serve a cached authorization after it. */
  expiresAt?: number;
}

export function callerFromClaims(claims: unknown): Caller | undefined {
  const parsed = tokenClaimsSchema.safeParse(claims);
  if (!parsed.success) return undefined;
  const c = parsed.data;
  return {
    userId: c.sub,
    organizationId: (c.organizationId ?? c["custom:organizationId"]) as string,
    hubIds: c.hubIds ?? [],
    permissions: new Set(c.permissions ?? []),
    permissionDetails: c.permissionDetails ?? [],
    ...(c.exp !== undefined ? { expiresAt: c.exp } : {}),
  };
}

/** Clocks of the identity provider and of the functions may differ by this much (exp, nbf and iat are read with it). */
export const clockSkewSeconds = 60;

/** True when the token lists no hubs (unrestricted) or lists this one. */
export function callerMayUseHub(caller: Caller, hubId: string): boolean {
  return caller.hubIds.length === 0 || caller.hubIds.includes(hubId);
}
