import { activeRunSlots } from "#shared/app/active-runs";
import { findConfiguration } from "#shared/app/configurations";
import { runQuota } from "#shared/app/usage";
import { markVisitDispatched } from "#shared/app/visits";
import { appConfig } from "#shared/config/env";
import { loadResultMapInput } from "#shared/domain/routing-results/map-input";
import type { Caller } from "#shared/domain/caller";
import { createRoutingResultService } from "#shared/domain/routing-results/service";
import type { OnDemandRunMessage } from "#shared/domain/runs/messages";
import { sqsSdk } from "#shared/queue/sqs-sdk";
import { dynamoHubStore } from "#shared/store/hub-store";
import { dynamoRoutingResultStore } from "#shared/store/routing-result-store";
import { visitPositions, visitRoutingResultId } from "#shared/store/visit-store";

/** Queues an on-demand run for the run worker (the same queue as schedule runs). */
export async function enqueueOnDemandRun(message: OnDemandRunMessage): Promise<void> {
  const { client, sdk } = await sqsSdk();
  await client.send(new sdk.SendMessageCommand({ QueueUrl: appConfig().RUN_QUEUE_URL, MessageBody: JSON.stringify(message) }));
}

/** Composition root of the routing results area (the run worker's is shared/app/run-worker.ts: API functions do not carry the optimizer). */
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

/** What the map and GeoJSON of a result are drawn from: the result, its hub and its unassigned visits' positions. */
export const resultMapInput = (caller: Caller, resultId: string) =>
  loadResultMapInput(
    {
      getResult: routingResultService.get,
      findHub: async (organizationId, hubId) => (await dynamoHubStore.find(organizationId, hubId))?.hub,
      visitPositions,
    },
    caller,
    resultId,
  );
