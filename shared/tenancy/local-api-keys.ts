import { randomUUID } from "node:crypto";
import type { TenantApiKeys } from "#shared/app/tenants";

/**
 * Locally there is no API Gateway and no key to present: the local gateway meters and throttles by
 * organization. A tenant record gets a reference (`apiKeyId: local-<uuid>`) and no key value, so no
 * secret is ever stored in clear in the local table.
 */
export const localApiKeys: TenantApiKeys = {
  create: async () => ({ apiKeyId: `local-${randomUUID()}` }),
  move: async () => ({}),
  setEnabled: async () => undefined,
  remove: async () => undefined,
};
