import { randomBytes } from "node:crypto";
import { appConfig } from "#shared/config/env";
import { configuredPlans } from "#shared/config/tenant-plans";
import { defaultMaxWebhooks } from "#shared/domain/tenants/plans";
import { planOf } from "#shared/domain/usage/run-quota";
import { aesGcmSealer, type SecretSealer } from "#shared/domain/webhooks/sealing";
import { createWebhookService } from "#shared/domain/webhooks/service";
import { tenantPlanName } from "#shared/store/usage-store";
import { kmsSealer } from "#shared/store/kms-sealer";
import { dynamoWebhookStore } from "#shared/store/webhook-store";

let sealer: SecretSealer | undefined;

/**
 * On AWS the stack's KMS key (WEBHOOK_KMS_KEY_ID); locally the key WEBHOOK_SEALING_KEY (npm start
 * keeps one under .local/). Outside Lambda with neither (a unit or tool process), a key of this
 * process only; on Lambda a missing key is a deployment fault and fails loudly.
 */
export function webhookSealer(): SecretSealer {
  if (sealer) return sealer;
  const { WEBHOOK_KMS_KEY_ID: kmsKeyId, WEBHOOK_SEALING_KEY: localKey } = appConfig();
  if (kmsKeyId) sealer = kmsSealer(kmsKeyId);
  else if (!localKey && process.env.AWS_LAMBDA_FUNCTION_NAME) throw new Error("WEBHOOK_KMS_KEY_ID is not set");
  else sealer = aesGcmSealer(localKey ? Buffer.from(localKey, "base64") : randomBytes(32));
  return sealer;
}

export async function maxWebhooksOf(organizationId: string): Promise<number> {
  return planOf(await tenantPlanName(organizationId), configuredPlans()).maxWebhooks ?? defaultMaxWebhooks;
}

/** Composition root of the webhook area. */
export const webhookService = createWebhookService(dynamoWebhookStore, {
  sealer: webhookSealer,
  allowLoopback: () => appConfig().WEBHOOKS_ALLOW_LOOPBACK === "true",
  maxWebhooks: maxWebhooksOf,
});
