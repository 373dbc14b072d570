import { activeRunSlots } from "#shared/app/active-runs";
import { findConfiguration } from "#shared/app/configurations";
import { runQuota } from "#shared/app/usage";
import { markVisitDispatched } from "#shared/app/visits";
import { appConfig } from "#shared/config/env";
import { createRoutingResultService } from "#shared/domain/routing-results/service";
import type { OnDemandRunMessage } from "#shared/domain/runs/messages";
import { sqsSdk } from "#shared/queue/sqs-sdk";
import { dynamoRoutingResultStore } from "#shared/store/routing-result-store";
import { visitRoutingResultId } from "#shared/store/visit-store";

/** Queues an on-demand run for the run worker (the same queue as schedule runs). */
export async function enqueueOnDemandRun(message: OnDemandRunMessage): Promise<void> {
  const { client, sdk } = await sqsSdk();
  await client.send(new sdk.SendMessageCommand({ QueueUrl: appConfig().RUN_QUEUE_URL, MessageBody: JSON.stringify(message) }));
}

/** Composition root of on-demand runs and dispatch (reads: shared/app/routing-results.ts; the run worker's: shared/app/run-worker.ts). */
export const routingResultService = createRoutingResultService({
  store: dynamoRoutingResultStore,
  findConfiguration,
  enqueue: enqueueOnDemandRun,
  activeRuns: activeRunSlots,
  runQuota,
  markVisitDispatched,
  visitRoutingResultId,
  appTimeZone: () => appConfig().APP_TIMEZONE,
});
