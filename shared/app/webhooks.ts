import { randomBytes } from "node:crypto";
import { appConfig } from "#shared/config/env";
import { defaultMaxWebhooks } from "#shared/domain/tenants/plans";
import { planOf } from "#shared/domain/usage/run-quota";
import { aesGcmSealer, type SecretSealer } from "#shared/domain/webhooks/sealing";
import { createWebhookService } from "#shared/domain/webhooks/service";
import { tenantPlanName } from "#shared/store/usage-store";
import { dynamoWebhookStore } from "#shared/store/webhook-store";

let sealer: SecretSealer | undefined;

/**
 * The sealing key: WEBHOOK_SEALING_KEY. Outside Lambda without one (a unit or tool process), a
 * key of this process only; on Lambda a missing key is a deployment fault and fails loudly.
 */
export function webhookSealer(): SecretSealer {
  if (sealer) return sealer;
  const configured = appConfig().WEBHOOK_SEALING_KEY;
  if (!configured && process.env.AWS_LAMBDA_FUNCTION_NAME) throw new Error("WEBHOOK_SEALING_KEY is not set");
  sealer = aesGcmSealer(configured ? Buffer.from(configured, "base64") : randomBytes(32));
  return sealer;
}

export async function maxWebhooksOf(organizationId: string): Promise<number> {
  return planOf(await tenantPlanName(organizationId)).maxWebhooks ?? defaultMaxWebhooks;
}

/** Composition root of the webhook area. */
export const webhookService = createWebhookService(dynamoWebhookStore, {
  sealer: webhookSealer,
  allowLoopback: () => appConfig().WEBHOOKS_ALLOW_LOOPBACK === "true",
  maxWebhooks: maxWebhooksOf,
});
