import { activeRunSlots } from "#shared/app/active-runs";
import { findConfiguration } from "#shared/app/configurations";
import { meterRun, runMemoryMb, runQuota } from "#shared/app/usage";
import { markVisitDispatched, oldestActiveVisits } from "#shared/app/visits";
import { appConfig } from "#shared/config/env";
import { loadResultMapInput } from "#shared/domain/routing-results/map-input";
import type { Caller } from "#shared/domain/caller";
import { createRoutingResultService } from "#shared/domain/routing-results/service";
import type { OnDemandRunMessage } from "#shared/domain/runs/messages";
import type { RunWorkerPorts } from "#shared/domain/runs/run-worker";
import { sqsSdk } from "#shared/queue/sqs-sdk";
import { routingThreadCount, solveRoutingInParallel } from "#shared/routing-threads/pool";
import { dynamoHubStore } from "#shared/store/hub-store";
import { dynamoRoutingResultStore } from "#shared/store/routing-result-store";
import { visitPositions } from "#shared/store/visit-store";
import { findScheduleForRun, finishRunClaim, readRunClaim, recordLogExecuted, startRunClaim, vehiclesForRun, visitRoutingResultId } from "#shared/store/run-store";

/** Queues an on-demand run for the run worker (the same queue as schedule runs). */
export async function enqueueOnDemandRun(message: OnDemandRunMessage): Promise<void> {
  const { client, sdk } = await sqsSdk();
  await client.send(new sdk.SendMessageCommand({ QueueUrl: appConfig().RUN_QUEUE_URL, MessageBody: JSON.stringify(message) }));
}

/** Composition root of the routing results area. */
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

/** The run worker's ports over DynamoDB, S3 and the optimizer; tests replace single ports (e.g. a failing solver). */
export function runWorkerPorts(overrides: Partial<RunWorkerPorts> = {}): RunWorkerPorts {
  return {
    now: () => new Date(),
    appTimeZone: appConfig().APP_TIMEZONE,
    readClaim: readRunClaim,
    startClaim: startRunClaim,
    finishClaim: finishRunClaim,
    findSchedule: findScheduleForRun,
    recordLogExecuted: (organizationId, scheduleId, log) => recordLogExecuted(organizationId, scheduleId, { ...log }),
    findConfiguration,
    findHub: async (organizationId, hubId) => (await dynamoHubStore.find(organizationId, hubId))?.hub,
    vehiclesForRun,
    oldestActiveVisits,
    // One search per core the memory size pays for (at most ROUTING_THREADS); one: the single-thread search itself.
    solve: (problem, options) =>
      solveRoutingInParallel(problem, { ...options, threads: routingThreadCount(appConfig().ROUTING_THREADS, undefined, appConfig().AWS_LAMBDA_FUNCTION_MEMORY_SIZE) }),
    results: dynamoRoutingResultStore,
    markVisitDispatched,
    visitRoutingResultId,
    releaseActiveRun: activeRunSlots.release,
    runQuotaRefusal: runQuota.refusal,
    meterRun: async (usage) => meterRun(usage),
    memoryMb: runMemoryMb,
    ...overrides,
  };
}
