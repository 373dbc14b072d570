import { randomUUID } from "node:crypto";
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent, Context } from "aws-lambda";
import { invokeHandler } from "#local/invocation";

/**
 * API Gateway's side of a REQUEST Lambda authorizer, for the local gateway: identity source
 * `Authorization` (missing or empty → 401 without invoking the authorizer), results cached per
 * identity value for `cacheTtlSeconds` (0 = no caching), and the returned policy evaluated against
 * the request's method ARN. The authorizer itself is the real module (functions/authorizer/).
 */
export const authorizerEntry = "functions/authorizer/tenant-authorizer.ts";

type AuthorizerHandler = (event: APIGatewayRequestAuthorizerEvent, context: Context) => Promise<AuthorizerResult>;
type AuthorizerResult = APIGatewayAuthorizerResult & { usageIdentifierKey?: string };

export type AuthorizerOutcome =
  /** API Gateway's UNAUTHORIZED gateway response (401). */
  | { kind: "unauthorized" }
  /** ACCESS_DENIED (403): the authorizer's context reaches the gateway response. */
  | { kind: "denied"; context: Record<string, string> }
  | { kind: "allowed"; principalId: string; context: Record<string, string>; usageIdentifierKey?: string };

export interface LocalAuthorizerOptions {
  /** The authorizer module's absolute path; it must export `handler`. */
  modulePath: string;
  cacheTtlSeconds: number;
}

/** `*` matches any run of characters (as in IAM resource ARNs). */
const arnPattern = (resource: string) =>
  new RegExp(
    `^${resource
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );

function evaluate(result: AuthorizerResult, methodArn: string): "Allow" | "Deny" {
  const statements = result.policyDocument?.Statement ?? [];
  const matching = statements.filter((statement) => {
    const resources = [(statement as { Resource?: string | string[] }).Resource ?? []].flat();
    return resources.some((resource) => arnPattern(resource).test(methodArn));
  });
  if (matching.some((statement) => statement.Effect === "Deny")) return "Deny";
  return matching.some((statement) => statement.Effect === "Allow") ? "Allow" : "Deny";
}

const stringContext = (context: AuthorizerResult["context"]) =>
  Object.fromEntries(Object.entries(context ?? {}).map(([key, value]) => [key, String(value)])) as Record<string, string>;

export class LocalAuthorizer {
  /** How often the authorizer module ran (the benchmark reads it). */
  invocations = 0;
  private readonly cache = new Map<string, { result: AuthorizerResult; expiresAt: number }>();
  private handler: Promise<AuthorizerHandler> | undefined;

  constructor(private readonly options: LocalAuthorizerOptions) {}

  async authorize(event: Omit<APIGatewayRequestAuthorizerEvent, "type">): Promise<AuthorizerOutcome> {
    const identity = Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === "authorization")?.[1];
    if (!identity) return { kind: "unauthorized" };
    const now = Date.now();
    let result = this.cache.get(identity);
    if (!result || result.expiresAt <= now) {
      this.cache.delete(identity);
      let answered: AuthorizerResult;
      try {
        answered = await this.invoke({ ...event, type: "REQUEST" } as APIGatewayRequestAuthorizerEvent);
      } catch (error) {
        // Only this exact message means 401; any other failure is API Gateway's AUTHORIZER_FAILURE (500).
        if (error instanceof Error && error.message === "Unauthorized") return { kind: "unauthorized" };
        throw error;
      }
      result = { result: answered, expiresAt: now + this.options.cacheTtlSeconds * 1000 };
      if (this.options.cacheTtlSeconds > 0) this.cache.set(identity, result);
    }
    const context = stringContext(result.result.context);
    if (evaluate(result.result, event.methodArn) === "Deny") return { kind: "denied", context };
    return { kind: "allowed", principalId: result.result.principalId, context, usageIdentifierKey: result.result.usageIdentifierKey };
  }

  private async invoke(event: APIGatewayRequestAuthorizerEvent): Promise<AuthorizerResult> {
    this.handler ??= import(this.options.modulePath).then((module: { handler: AuthorizerHandler }) => module.handler);
    const handler = await this.handler;
    this.invocations += 1;
    const startedAt = Date.now();
    const context = {
      awsRequestId: randomUUID(),
      functionName: "TenantAuthorizer",
      functionVersion: "$LATEST",
      memoryLimitInMB: "256",
      callbackWaitsForEmptyEventLoop: true,
      getRemainingTimeInMillis: () => 10_000 - (Date.now() - startedAt),
    } as unknown as Context;
    return invokeHandler(handler, event, context);
  }
}
