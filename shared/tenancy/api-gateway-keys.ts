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
      return { apiKeyId: key.id, apiKeyValue: key.value };
    },
    move: async (tenant, toPlan) => {
      const keyId = requireKeyId(tenant.apiKeyId);
      // A key may sit in one usage plan per stage: leave the old plan first.
      const fromPlanId = await usagePlanId(tenant.plan);
      const toPlanId = await usagePlanId(toPlan);
      await client.send(new DeleteUsagePlanKeyCommand({ usagePlanId: fromPlanId, keyId }));
      await client.send(new CreateUsagePlanKeyCommand({ usagePlanId: toPlanId, keyId, keyType: "API_KEY" }));
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
