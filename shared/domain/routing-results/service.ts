import { type LiveRoute, liveRoutesOf } from "#shared/domain/runs/live-day";
import { type Caller, callerMayUseHub } from "#shared/domain/caller";
import type { RoutingConfiguration } from "#shared/domain/configurations/schema";
import { ConflictError, NotFoundError, ValidationError } from "#shared/domain/errors";
import { newId } from "#shared/domain/ids";
import {
  countingOwnAssignments,
  dispatchRoutes,
  type MarkVisitDispatched,
  type ReturnVisitToPool,
  returnReleasedDrops,
  type VisitRoutingResultId,
} from "#shared/domain/routing-results/dispatch";
import type { ReoptimizeOptions, ResultReoptimizeInput } from "#shared/domain/routing-results/schema";
import type {
  DispatchOutcome,
  ResultCreateInput,
  ResultDispatchQuery,
  ResultListQuery,
  RoutingResult,
  RoutingResultBody,
  RoutingResultRecord,
} from "#shared/domain/routing-results/schema";
import { type ActiveRunSlots, onDemandRunKey, TooManyActiveRunsError } from "#shared/domain/runs/active-runs";
import type { OnDemandRunMessage } from "#shared/domain/runs/messages";
import { formatWallClock } from "#shared/domain/schedules/timetable";
import { formatDateTimeUtc, isValidTimeZone } from "#shared/domain/time";
import { type RunQuota, RunQuotaExceededError, runQuotaResetsAt } from "#shared/domain/usage/run-quota";

export interface ResultListFilter {
  hubId?: string | undefined;
  createdFrom?: RoutingResultRecord["createdFrom"] | undefined;
  /** The caller's hubs when the token restricts them (empty = all). */
  allowedHubIds: string[];
  limit: number;
  cursor?: string | undefined;
}

/** Persistence port of routing results (DynamoDB item + S3 body, shared/store/routing-result-store.ts). */
export interface RoutingResultStore {
  insert(result: RoutingResultRecord): Promise<void>;
  /** Writes the result as given (a retried run resets its own result to ongoing). */
  upsertOngoing(result: RoutingResultRecord): Promise<void>;
  find(organizationId: string, resultId: string): Promise<RoutingResultRecord | undefined>;
  readBody(organizationId: string, resultId: string): Promise<RoutingResultBody | undefined>;
  /** Stores the body, then marks the result done; false when it was done already or is gone. */
  complete(
    organizationId: string,
    resultId: string,
    body: RoutingResultBody,
    changes: { summary: NonNullable<RoutingResultRecord["summary"]>; time: string },
  ): Promise<boolean>;
  fail(organizationId: string, resultId: string, message: string, time: string): Promise<boolean>;
  /**
   * Records one dispatch (`vehicleIds`: its own vehicles) in one conditional write: the stored
   * record keeps this dispatch's counts and adds its vehicles to those of earlier dispatches, so
   * concurrent dispatches all count (shared/store/routing-result-items.ts).
   */
  recordDispatch(organizationId: string, resultId: string, dispatch: DispatchRecording, time: string): Promise<void>;
  list(organizationId: string, filter: ResultListFilter): Promise<{ items: RoutingResultRecord[]; nextCursor: string | null }>;
}

/** One dispatch as recorded: its own id and vehicles, and its counts. */
export interface DispatchRecording {
  dispatchId: string;
  dispatchedTime: string;
  vehicleIds: string[];
  success: number;
  failed: number;
}

/** The stored record after one more dispatch: its counts and id, every vehicle dispatched so far. */
export function withDispatch(
  previous: RoutingResultRecord["dispatch"] | undefined,
  dispatch: DispatchRecording,
): NonNullable<RoutingResultRecord["dispatch"]> {
  return {
    dispatchedTime: dispatch.dispatchedTime,
    vehicleIds: [...new Set([...(previous?.vehicleIds ?? []), ...dispatch.vehicleIds])],
    dispatchId: dispatch.dispatchId,
    lastVehicleIds: [...new Set(dispatch.vehicleIds)],
    success: dispatch.success,
    failed: dispatch.failed,
  };
}

/** On-demand runs need the result items only (a new result has no body yet). */
/** One re-optimization per hub at a time: a lease item naming the result that holds it. */
export interface ReoptimizeLocks {
  /** Takes the hub's lock for `resultId` when it is free, expired, or held by `replacing`; false when another holds it. */
  take(organizationId: string, hubId: string, resultId: string, until: Date, now: Date, replacing?: string): Promise<boolean>;
  /** The result holding the hub's lock (unexpired at `now`), if any. */
  holder(organizationId: string, hubId: string, now: Date): Promise<string | undefined>;
}

/** 409 `reopt-409`: the hub has a re-optimization queued or running. */
export class ReoptimizeInProgressError extends ConflictError {
  constructor(readonly resultId: string) {
    super(`Hub already has a re-optimization in progress (routing result ${resultId}); wait for it to finish.`, "reopt-409");
  }
  override details(): Record<string, unknown> {
    return { resultId: this.resultId };
  }
}

export interface OnDemandRunDependencies {
  store: Pick<RoutingResultStore, "insert" | "fail" | "find">;
  reoptimizeLocks: ReoptimizeLocks;
  findConfiguration(organizationId: string, configurationId: string): Promise<RoutingConfiguration | undefined>;
  enqueue(message: OnDemandRunMessage): Promise<void>;
  /** The organization's cap on active runs: an on-demand run takes a slot before it is created. */
  activeRuns: ActiveRunSlots;
  /** The plan's monthly run-seconds quota: a run whose time budget no longer fits is refused (429) before anything is created. */
  runQuota: RunQuota;
  appTimeZone: () => string;
  now?: () => Date;
}

export interface RoutingResultDispatchDependencies {
  store: RoutingResultStore;
  markVisitDispatched: MarkVisitDispatched;
  visitRoutingResultId: VisitRoutingResultId;
  /** Writes the dispatched vehicles' live routes (what later runs of the day plan around). */
  recordLiveRoutes: (organizationId: string, routes: readonly LiveRoute[]) => Promise<void>;
  /** A re-plan's released visits it dropped go back to UNASSIGNED. */
  returnVisitToPool: ReturnVisitToPool;
  now?: () => Date;
}

/** `Y-m-d H:i` in the given zone (UTC when the zone is unknown): the date-time part of result names. */
export function resultNameTime(instant: Date, timeZone: string): string {
  return formatWallClock(instant, isValidTimeZone(timeZone) ? timeZone : "UTC");
}

export const emptyBody: RoutingResultBody = { routes: [], dropped: [] };

/** Listing results needs only their items (no bodies): `GET /routing/results` is built from this alone. */
export function createRoutingResultIndex(store: Pick<RoutingResultStore, "list">) {
  return {
    async list(caller: Caller, query: ResultListQuery) {
      if (query.hubId !== undefined && !callerMayUseHub(caller, query.hubId)) {
        throw ValidationError.single("hubId", "hubId must be one of the hubs your token allows");
      }
      return store.list(caller.organizationId, { ...query, allowedHubIds: caller.hubIds });
    },
  };
}

/**
 * Reading results needs only their store: get and the map functions are built from this alone, so
 * they do not load what runs and dispatch need (profiles, quotas, the run queue, visits).
 */
export function createRoutingResultReads(store: RoutingResultStore) {
  async function findVisible(caller: Caller, resultId: string): Promise<RoutingResultRecord> {
    const result = await store.find(caller.organizationId, resultId);
    if (!result || !callerMayUseHub(caller, result.hubId)) throw new NotFoundError();
    return result;
  }

  return {
    findVisible,

    async get(caller: Caller, resultId: string): Promise<RoutingResult> {
      const result = await findVisible(caller, resultId);
      const body = result.status === "done" ? ((await store.readBody(caller.organizationId, resultId)) ?? emptyBody) : emptyBody;
      return { ...result, ...body };
    },
  };
}

/** Reads plus on-demand runs and dispatch. */
/** `POST /routing/result`: built apart from dispatch, so it does not carry the S3 client (bodies). */
export function createOnDemandRuns(deps: OnDemandRunDependencies) {
  const { store } = deps;
  const now = deps.now ?? (() => new Date());

  return {
    /**
     * On-demand run: the result is created `ongoing` and a run message queued; the run worker fills
     * it (an API call's 29 s are no budget for the optimizer). The profile is read again at run time.
     * The run first takes a slot of the organization's cap on active runs: at the cap → 429 and
     * nothing is created or queued; the worker frees the slot when the run is over.
     */
    async createOnDemand(caller: Caller, input: ResultCreateInput): Promise<RoutingResult> {
      const configuration = await deps.findConfiguration(caller.organizationId, input.configurationId);
      if (!configuration || !callerMayUseHub(caller, configuration.hubId)) {
        throw ValidationError.single("configurationId", "configurationId must name a configuration profile of your organization");
      }
      const time = now();
      return queueRun(caller, configuration, { name: input.name, createdFrom: "API", parentResultId: null, time, resultId: newId(time) });
    },

    /**
     * Re-plans a dispatched day (docs/api/execution.md): a new result `createdFrom: REOPTIMIZE` naming
     * its parent, run like an on-demand run — which plans around what is on the road: committed stops
     * are the vehicles' starts, still-ASSIGNED visits stay on their vehicle, new active visits join.
     * One per hub at a time (409 `reopt-409`); it counts against the run caps like any run.
     */
    async reoptimize(caller: Caller, parentResultId: string, input: ResultReoptimizeInput): Promise<RoutingResult> {
      const parent = await deps.store.find(caller.organizationId, parentResultId);
      if (!parent || !callerMayUseHub(caller, parent.hubId)) throw new NotFoundError();
      if (parent.status !== "done" || parent.dispatch === null)
        throw new ConflictError(
          `Only a done, dispatched routing result can be re-optimized; this one is ${parent.dispatch === null ? "not dispatched" : parent.status}.`,
        );
      const configuration = await deps.findConfiguration(caller.organizationId, parent.configurationId);
      if (!configuration) throw new ConflictError("The configuration profile of this result no longer exists.");
      const time = now();
      const resultId = newId(time);
      const { name, ...options } = input;
      const budgetSeconds = options.timeLimitSeconds ?? configuration.timeLimitSeconds;
      // Long enough for a queued run and its budget; a lock whose run ended is taken over at once (below).
      const until = new Date(time.getTime() + (budgetSeconds + 15 * 60) * 1000);
      if (!(await deps.reoptimizeLocks.take(caller.organizationId, parent.hubId, resultId, until, time))) {
        const holder = await deps.reoptimizeLocks.holder(caller.organizationId, parent.hubId, time);
        const running = holder !== undefined ? await deps.store.find(caller.organizationId, holder) : undefined;
        const free = holder === undefined || !running || running.status !== "ongoing";
        if (!free || !(await deps.reoptimizeLocks.take(caller.organizationId, parent.hubId, resultId, until, time, holder)))
          throw new ReoptimizeInProgressError(holder ?? "unknown");
      }
      return queueRun(caller, configuration, {
        name,
        createdFrom: "REOPTIMIZE",
        parentResultId,
        time,
        resultId,
        reoptimize: options,
        budgetSeconds,
      });
    },
  };

  async function queueRun(
    caller: Caller,
    configuration: RoutingConfiguration,
    origin: {
      name: string | undefined;
      createdFrom: RoutingResultRecord["createdFrom"];
      parentResultId: string | null;
      time: Date;
      resultId: string;
      reoptimize?: ReoptimizeOptions;
      /** The run's optimizer budget (default the profile's): what the run-seconds quota must still hold. */
      budgetSeconds?: number;
    },
  ): Promise<RoutingResult> {
    {
      const { time, resultId } = origin;
      const input = { name: origin.name };
      const runKey = onDemandRunKey(resultId);
      const refusal = await deps.runQuota.refusal(caller.organizationId, origin.budgetSeconds ?? configuration.timeLimitSeconds, time);
      if (refusal) throw new RunQuotaExceededError(refusal, (runQuotaResetsAt(time).getTime() - time.getTime()) / 1000);
      if (!(await deps.activeRuns.take(caller.organizationId, runKey)))
        throw new TooManyActiveRunsError(await deps.activeRuns.max(caller.organizationId));
      const result: RoutingResultRecord = {
        _id: resultId,
        name: input.name ?? `${configuration.name} - ${resultNameTime(time, deps.appTimeZone())}`,
        hubId: configuration.hubId,
        configurationId: configuration._id,
        scheduleId: null,
        createdFrom: origin.createdFrom,
        parentResultId: origin.parentResultId,
        ...(origin.reoptimize ? { reoptimize: origin.reoptimize } : {}),
        status: "ongoing",
        message: null,
        summary: null,
        dispatch: null,
        runTime: formatDateTimeUtc(time),
        organizationId: caller.organizationId,
        createdBy: caller.userId,
        createdTime: formatDateTimeUtc(time),
        updatedTime: formatDateTimeUtc(time),
        finishedTime: null,
      };
      try {
        await store.insert(result);
      } catch (error) {
        await deps.activeRuns.release(caller.organizationId, runKey);
        throw error;
      }
      try {
        await deps.enqueue({ kind: "onDemand", organizationId: caller.organizationId, resultId: result._id });
      } catch (error) {
        // Never leave an ongoing result no worker will ever pick up, nor a slot no run will free.
        await store.fail(
          caller.organizationId,
          result._id,
          "The run could not be queued; create the result again.",
          formatDateTimeUtc(now()),
        );
        await deps.activeRuns.release(caller.organizationId, runKey);
        throw error;
      }
      return { ...result, ...emptyBody };
    }
  }
}

/** `POST /routing/result/{resultId}/dispatch`: reads the result's body and marks its visits dispatched. */
export function createRoutingResultDispatch(deps: RoutingResultDispatchDependencies) {
  const { store } = deps;
  const now = deps.now ?? (() => new Date());
  const { findVisible } = createRoutingResultReads(store);

  return {
    async dispatch(caller: Caller, resultId: string, query: ResultDispatchQuery): Promise<DispatchOutcome> {
      const result = await findVisible(caller, resultId);
      if (result.status !== "done") throw new ConflictError(`Only a done routing result can be dispatched; this one is ${result.status}.`);
      const body = (await store.readBody(caller.organizationId, resultId)) ?? emptyBody;
      let routes = body.routes;
      if (query.vehicleIds !== undefined) {
        const ofResult = new Set(routes.map((route) => route.vehicleId));
        const unknown = query.vehicleIds.filter((id) => !ofResult.has(id));
        if (unknown.length > 0) throw ValidationError.single("vehicleIds", `not vehicles of this result: ${unknown.join(", ")}`);
        const wanted = new Set(query.vehicleIds);
        routes = routes.filter((route) => wanted.has(route.vehicleId));
      }
      const at = now();
      const time = formatDateTimeUtc(at);
      const mark = countingOwnAssignments(resultId, deps.markVisitDispatched, deps.visitRoutingResultId);
      const assigned = await dispatchRoutes(routes, { organizationId: caller.organizationId, hubId: result.hubId, resultId }, mark, time, {
        source: "dispatcher",
        userId: caller.userId,
        at: at.toISOString(),
      });
      const unassigned = await returnReleasedDrops(
        body.dropped,
        { organizationId: caller.organizationId, hubId: result.hubId },
        deps.returnVisitToPool,
        at,
      );
      const outcome = unassigned > 0 ? { ...assigned, unassigned } : assigned;
      await deps.recordLiveRoutes(
        caller.organizationId,
        liveRoutesOf(routes, {
          hubId: result.hubId,
          resultId,
          timeZone: result.summary?.timeZone ?? "UTC",
          dispatchedTime: time,
          configurationId: result.configurationId,
          ...(result.summary ? { planningDay: result.summary.planningDay } : {}),
        }),
      );
      const vehicleIds = routes.map((route) => route.vehicleId);
      await store.recordDispatch(
        caller.organizationId,
        resultId,
        { dispatchId: newId(), dispatchedTime: time, vehicleIds, ...outcome },
        time,
      );
      return outcome;
    },
  };
}
