import { activeRunSlots } from "#shared/app/active-runs";
import { findConfiguration } from "#shared/app/configurations";
import { runQuota } from "#shared/app/usage";
import { appConfig } from "#shared/config/env";
import { createOnDemandRuns } from "#shared/domain/routing-results/service";
import type { OnDemandRunMessage } from "#shared/domain/runs/messages";
import { runQueueUrl, runsForSharedQueue } from "#shared/app/run-spillover";
import { onDemandRunKey } from "#shared/domain/runs/active-runs";
import { sqsSdk } from "#shared/queue/sqs-sdk";
import { dynamoRoutingResultItems } from "#shared/store/routing-result-items";
import { dynamoReoptimizeLocks } from "#shared/store/reoptimize-lock-store";

/** Queues an on-demand run for the run worker (the same queues as schedule runs: the spillover one beyond the organization's share). */
export async function enqueueOnDemandRun(message: OnDemandRunMessage): Promise<void> {
  const [{ client, sdk }, room] = await Promise.all([
    sqsSdk(),
    runsForSharedQueue(message.organizationId, [onDemandRunKey(message.resultId)]),
  ]);
  await client.send(new sdk.SendMessageCommand({ QueueUrl: runQueueUrl(room === 0), MessageBody: JSON.stringify(message) }));
}

/**
 * Composition root of on-demand runs (`POST /routing/result`) over the result items only: a new
 * result has no body, so this function does not carry the S3 client. Dispatch:
 * shared/app/routing-result-dispatch.ts; reads: shared/app/routing-results.ts; the run worker's:
 * shared/app/run-worker.ts.
 */
export const onDemandRuns = createOnDemandRuns({
  store: dynamoRoutingResultItems,
  reoptimizeLocks: dynamoReoptimizeLocks,
  findConfiguration,
  enqueue: enqueueOnDemandRun,
  activeRuns: activeRunSlots,
  runQuota,
  appTimeZone: () => appConfig().APP_TIMEZONE,
});
