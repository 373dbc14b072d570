import * as z from "zod/mini";
import type { Caller } from "#shared/domain/caller";

/**
 * The verified caller as the tenant authorizer hands it to the functions: API Gateway passes an
 * authorizer's context as flat string values (`event.requestContext.authorizer`), so the lists
 * travel as JSON text. Functions trust it: only the authorizer, after verifying the token, can put
 * it there (the local gateway runs the same authorizer, so it is the same locally).
 */
export interface AuthorizerCallerContext {
  organizationId: string;
  userId: string;
  hubIds: string;
  permissions: string;
  permissionDetails: string;
  /** The token's `exp`, in seconds since the epoch (API Gateway keeps context values as strings). */
  expiresAt?: string;
}

export function authorizerContextOf(caller: Caller): AuthorizerCallerContext {
  return {
    organizationId: caller.organizationId,
    userId: caller.userId,
    hubIds: JSON.stringify(caller.hubIds),
    permissions: JSON.stringify([...caller.permissions]),
    permissionDetails: JSON.stringify(caller.permissionDetails),
    ...(caller.expiresAt !== undefined ? { expiresAt: String(caller.expiresAt) } : {}),
  };
}

const jsonText = <T extends z.ZodMiniType>(schema: T) =>
  z.pipe(
    z.string(),
    z.transform((text: string, context): z.infer<T> => {
      try {
        return schema.parse(JSON.parse(text));
      } catch {
        context.issues.push({ code: "custom", message: "not the authorizer's JSON", input: text });
        return z.NEVER;
      }
    }),
  );

const contextSchema = z.looseObject({
  organizationId: z.string().check(z.minLength(1)),
  userId: z.string().check(z.minLength(1)),
  hubIds: jsonText(z.array(z.string())),
  permissions: jsonText(z.array(z.string())),
  permissionDetails: jsonText(
    z.array(
      z.looseObject({ permissionName: z.string(), dataTypeId: z.optional(z.string()), hiddenFields: z.optional(z.array(z.string())) }),
    ),
  ),
  expiresAt: z.optional(z.string().check(z.regex(/^\d{1,12}(\.\d+)?$/))),
});

/** The caller of a request the authorizer let through; undefined when the event carries no (or no well-formed) authorizer context. */
export function callerFromAuthorizerContext(authorizer: unknown): Caller | undefined {
  const parsed = contextSchema.safeParse(authorizer);
  if (!parsed.success) return undefined;
  const context = parsed.data;
  return {
    organizationId: context.organizationId,
    userId: context.userId,
    hubIds: context.hubIds,
    permissions: new Set(context.permissions),
    permissionDetails: context.permissionDetails,
    ...(context.expiresAt !== undefined ? { expiresAt: Number(context.expiresAt) } : {}),
  };
}
