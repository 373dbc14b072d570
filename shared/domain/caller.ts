import * as z from "zod";

/**
 * The authenticated caller, built only from verified token claims (ARCHITECTURE.md §3). The
 * organization never comes from the path, the query or the body.
 */
const permissionDetailSchema = z.looseObject({
  permissionName: z.string(),
  dataTypeId: z.string().optional(),
  hiddenFields: z.array(z.string()).optional(),
});

/**
 * A hub-restricted token lists at most this many hubs: lists filter on them with one DynamoDB
 * `IN (…)`, which takes at most 100 values, so a longer list would silently hide resources.
 */
export const MAX_TOKEN_HUBS = 100;

export const tokenClaimsSchema = z
  .looseObject({
    sub: z.string().min(1),
    organizationId: z.string().min(1).optional(),
    "custom:organizationId": z.string().min(1).optional(),
    hubIds: z.array(z.string()).max(MAX_TOKEN_HUBS).optional(),
    permissions: z.array(z.string()).optional(),
    permissionDetails: z.array(permissionDetailSchema).optional(),
  })
  .refine((claims) => claims.organizationId ?? claims["custom:organizationId"], {
    message: "token carries no organizationId",
  });

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
