import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanKeyCommand,
  GetUsagePlansCommand,
  UpdateApiKeyCommand,
} from "@aws-sdk/client-api-gateway";
import type { TenantApiKeys } from "#shared/app/tenants";
import { usagePlanName } from "#shared/domain/tenants/plan-catalog";

/**
 * Tenants' usage-plan keys on AWS: one API Gateway API key per tenant, attached to the usage plan
 * the stack `stackName` built for its plan (found by name, shared/domain/tenants/plan-catalog.ts).
 */
export function apiGatewayKeys(stackName: string, client = new APIGatewayClient({})): TenantApiKeys {
  const usagePlanIds = new Map<string, string>();
  const usagePlanId = async (plan: string): Promise<string> => {
    const name = usagePlanName(stackName, plan);
    const known = usagePlanIds.get(name);
    if (known) return known;
    let position: string | undefined;
    do {
      const page = await client.send(new GetUsagePlansCommand({ position, limit: 500 }));
      for (const usagePlan of page.items ?? []) if (usagePlan.name && usagePlan.id) usagePlanIds.set(usagePlan.name, usagePlan.id);
      position = page.position;
    } while (position && !usagePlanIds.has(name));
    const id = usagePlanIds.get(name);
    if (!id) throw new Error(`no usage plan ${name}: deploy the stack with this plan first (cdk deploy)`);
    return id;
  };
  /** The usage plans of this stack the key is attached to (GetUsagePlans filtered by key). */
  const usagePlansOfKey = async (keyId: string): Promise<Array<{ id: string; name: string }>> => {
    const found: Array<{ id: string; name: string }> = [];
    let position: string | undefined;
    do {
      const page = await client.send(new GetUsagePlansCommand({ keyId, position, limit: 500 }));
      for (const usagePlan of page.items ?? [])
        if (usagePlan.id && usagePlan.name?.startsWith(`${stackName}-`)) found.push({ id: usagePlan.id, name: usagePlan.name });
      position = page.position;
    } while (position);
    return found;
  };
  const requireKeyId = (apiKeyId: string | undefined) => {
    if (!apiKeyId) throw new Error("the tenant record has no API key id (enrolled locally?)");
    return apiKeyId;
  };
  return {
    create: async (organizationId, plan) => {
      const planId = await usagePlanId(plan);
      const key = await client.send(
        new CreateApiKeyCommand({
          name: `${stackName}-${organizationId}`.slice(0, 1024),
          enabled: true,
          description: `Tenant ${organizationId}`,
        }),
      );
      if (!key.id || !key.value) throw new Error("API Gateway created a key without id or value");
      try {
        await client.send(new CreateUsagePlanKeyCommand({ usagePlanId: planId, keyId: key.id, keyType: "API_KEY" }));
      } catch (error) {
        await client.send(new DeleteApiKeyCommand({ apiKey: key.id }));
        throw error;
      }
      return { apiKeyId: key.id, apiKeyValue: key.value, usagePlanId: planId };
    },
    move: async (tenant, toPlan) => {
      const keyId = requireKeyId(tenant.apiKeyId);
      const toPlanId = await usagePlanId(toPlan);
      const attach = (usagePlanId: string) => client.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId, keyType: "API_KEY" }));
      const detach = (usagePlanId: string) => client.send(new DeleteUsagePlanKeyCommand({ usagePlanId, keyId }));
      // The stack's usage plans the key is on now: none (its plan was deleted), one, or several (a failed move).
      const current = await usagePlansOfKey(keyId);
      const others = current.filter((usagePlan) => usagePlan.id !== toPlanId);
      const onTarget = current.some((usagePlan) => usagePlan.id === toPlanId);
      if (!onTarget) {
        try {
          // Attach first: a failure here leaves the key where it was.
          await attach(toPlanId);
        } catch (error) {
          // API Gateway allows one usage plan per key and stage (ConflictException): detach, attach,
          // and on failure put the key back on the plan it came from, so it is on exactly one.
          if ((error as Error).name !== "ConflictException" || others.length === 0) throw error;
          for (const other of others) await detach(other.id);
          try {
            await attach(toPlanId);
          } catch (attachError) {
            const back = others.find((usagePlan) => usagePlan.name === usagePlanName(stackName, tenant.plan)) ?? others[0];
            if (back) await attach(back.id);
            throw attachError;
          }
          return { usagePlanId: toPlanId };
        }
      }
      // On the new plan now: leave every other plan of the stack (the old one; strays of a failed move).
      for (const other of others) await detach(other.id);
      return { usagePlanId: toPlanId };
    },
    setEnabled: async (tenant, enabled) => {
      const apiKey = requireKeyId(tenant.apiKeyId);
      await client.send(
        new UpdateApiKeyCommand({ apiKey, patchOperations: [{ op: "replace", path: "/enabled", value: String(enabled) }] }),
      );
    },
    remove: async (apiKeyId) => {
      if (apiKeyId) await client.send(new DeleteApiKeyCommand({ apiKey: apiKeyId }));
    },
  };
}
