import { randomUUID } from "node:crypto";
import { permissionSlugs } from "#functions/routes";
import { type LocalStackOptions, startLocalStack } from "#local/stack";
import { generateSigningKey, mintToken } from "#local/tokens";
import { tableDefinition } from "#shared/store/table-definition";

/**
 * The cost benches' local stack: in memory, no scheduler, DynamoDB behind the semantics proxy with
 * capture on and conflicts off (every call recorded with its item images, none refused), one bench
 * organization and a JSON client holding every permission. Import it dynamically, after the bench set
 * LOG_LEVEL: the handlers' logger reads its level when their modules load.
 */
export async function captureStack(options: { sub?: string; planOverrides?: LocalStackOptions["planOverrides"] } = {}) {
  const signingKey = generateSigningKey();
  const stack = await startLocalStack({
    port: 0,
    inMemory: true,
    stateDirectory: "",
    signingKey,
    runScheduler: false,
    ...(options.planOverrides ? { planOverrides: options.planOverrides } : {}),
    dynamodbSemantics: { conflicts: false, capture: true },
  });
  const semantics = stack.dynamodbSemantics!;
  const organizationId = `bench-${randomUUID()}`;
  const token = mintToken(signingKey, { sub: options.sub ?? "bench", organizationId, permissions: [...permissionSlugs] });
  /** One call through the local gateway: its status, JSON body and milliseconds. */
  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; ms: number }> {
    const started = performance.now();
    const response = await fetch(`${stack.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, ms: performance.now() - started };
  }
  return { stack, semantics, indexes: tableDefinition.globalSecondaryIndexes, organizationId, token, call };
}
