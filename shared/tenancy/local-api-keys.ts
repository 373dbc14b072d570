import { randomBytes } from "node:crypto";
import type { TenantApiKeys } from "#shared/app/tenants";

/** Locally there is no API Gateway: a tenant's key is a generated value (the local gateway meters by organization). */
export const localApiKeys: TenantApiKeys = {
  create: async () => ({ apiKeyValue: `local-${randomBytes(16).toString("hex")}` }),
  move: async () => undefined,
  setEnabled: async () => undefined,
  remove: async () => undefined,
};
