import { activeRunSlots } from "#shared/app/active-runs";
import { roadGeometry, roadMatrix } from "#shared/app/travel";
import { travelProviderRefusalOf } from "#shared/app/travel-plan";
import { findConfiguration } from "#shared/app/configurations";
import { meterRun, runMemoryMb, runQuota } from "#shared/app/usage";
import { markVisitDispatched, oldestActiveVisits } from "#shared/app/visits";
import { appConfig } from "#shared/config/env";
import type { RunWorkerPorts } from "#shared/domain/runs/run-worker";
import { routingThreadCount, solveRoutingInParallel } from "#shared/routing-threads/pool";
import { dynamoHubStore } from "#shared/store/hub-store";
import { dynamoRoutingResultStore } from "#shared/store/routing-result-store";
import {
  findScheduleForRun,
  finishRunClaim,
  readRunClaim,
  recordLogExecuted,
  startRunClaim,
  vehiclesForRun,
} from "#shared/store/run-store";
import { returnVisitToPool, visitRoutingResultId } from "#shared/store/visit-store";
import { liveRoutesOfHub, recordLiveRoutes, visitsOfHubByIds } from "#shared/store/live-route-store";

/** Composition root of the run worker: its ports over DynamoDB, S3 and the optimizer; tests replace single ports (e.g. a failing solver). */
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
    liveRoutes: liveRoutesOfHub,
    visitsByIds: visitsOfHubByIds,
    recordLiveRoutes,
    // One search per core the memory size pays for (at most ROUTING_THREADS); one: the single-thread search itself.
    solve: (problem, options) =>
      solveRoutingInParallel(problem, {
        ...options,
        threads: routingThreadCount(appConfig().ROUTING_THREADS, undefined, appConfig().AWS_LAMBDA_FUNCTION_MEMORY_SIZE),
      }),
    results: dynamoRoutingResultStore,
    markVisitDispatched,
    returnVisitToPool,
    visitRoutingResultId,
    releaseActiveRun: activeRunSlots.release,
    runQuotaRefusal: runQuota.refusal,
    meterRun: async (usage) => meterRun(usage),
    memoryMb: runMemoryMb,
    travelProviderRefusal: travelProviderRefusalOf,
    roadMatrix,
    roadGeometry,
    ...overrides,
  };
}
