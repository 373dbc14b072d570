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

export const tokenClaimsSchema = z
  .looseObject({
    sub: z.string().check(z.minLength(1)),
    organizationId: z.optional(z.string().check(z.minLength(1))),
    "custom:organizationId": z.optional(z.string().check(z.minLength(1))),
    hubIds: z.optional(z.array(z.string()).check(z.maxLength(MAX_TOKEN_HUBS))),
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
  };
}

/** True when the token lists no hubs (unrestricted) or lists this one. */
export function callerMayUseHub(caller: Caller, hubId: string): boolean {
  return caller.hubIds.length === 0 || caller.hubIds.includes(hubId);
}
