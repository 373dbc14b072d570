import type { RoutingConfiguration } from "#shared/domain/configurations/schema";
import type { Hub } from "#shared/domain/hubs/schema";
import { ID_PATTERN, newId } from "#shared/domain/ids";
import {
  countingOwnAssignments,
  dispatchRoutes,
  type MarkVisitDispatched,
  type ReturnVisitToPool,
  returnReleasedDrops,
  type VisitRoutingResultId,
} from "#shared/domain/routing-results/dispatch";
import type { ReoptimizeOptions, RoutingResultBody, RoutingResultRecord } from "#shared/domain/routing-results/schema";
import { isActiveVisitStatus } from "#shared/domain/visits/schema";
import { resultNameTime, type RoutingResultStore } from "#shared/domain/routing-results/service";
import { buildRunProblem, describeSolution, explainDrops, type RunPlanInput } from "#shared/domain/runs/build-problem";
import { planViolations } from "#shared/domain/runs/check-plan";
import { type LiveRoute, liveRoutesOf, liveVehiclesOf, pinnedCount } from "#shared/domain/runs/live-day";
import { onDemandRunKey, scheduleRunKey } from "#shared/domain/runs/active-runs";
import type { OnDemandRunMessage, RoutingRunMessage, RunQueueMessage } from "#shared/domain/runs/messages";
import type { ScheduleRecord } from "#shared/domain/schedules/schema";
import { formatDateTimeUtc } from "#shared/domain/time";
import type { Vehicle } from "#shared/domain/vehicles/schema";
import type { Visit } from "#shared/domain/visits/schema";
import { roundSeconds, type RunUsage, utcDay } from "#shared/domain/usage/schema";
import type { Location, RoutingProblem, RoutingSolution, SolveOptions } from "#shared/routing/model";
import { matrixTravel } from "#shared/routing/matrix";
import { type RoadMatrix, TravelMatrixError } from "#shared/domain/travel/road-matrix";
import type { TravelReport } from "#shared/domain/routing-results/schema";
import type { GeometryRoute, RoadGeometry } from "#shared/domain/travel/road-geometry";

/**
 * The routing-run worker over ports (no AWS here). One message = one run:
 *
 * - `schedule` messages are idempotent per `scheduleId#slot` through the slot's claim item
 *   (ENQUEUED/SENT/FAILED → RUNNING → DONE/SKIPPED/FAILED): a redelivery of a finished slot is
 *   acknowledged without running, a delivery while another worker holds the slot is retried later.
 *   The run is skipped when the schedule was deleted, paused or changed since the claim.
 * - `onDemand` messages fill the result POST /routing/result created; a done result is not re-run.
 *
 * A run reads the profile (hub, vehicles, settings) at run time, collects the hub's active visits
 * (oldest first, at most 1,500), runs the optimizer within the time budget, stores the result and,
 * with autoDispatch, dispatches it. No visits, no vehicles or a deleted profile → SKIPPED, no result.
 * A retry of a slot whose result is done already does not plan again: it only finishes the dispatch. Any other
 * failure → FAILED with the reason and the message is retried by SQS; on the last delivery the
 * outcome says the message moves to the dead-letter queue.
 *
 * Metering: a run whose optimizer produced a stored result records one usage item (optimizer
 * seconds, memory, visits, vehicles), keyed by its result id, so a redelivery never meters it twice;
 * a run that fails after its optimizer ran is metered (outcome failed) on its last delivery only.
 * A run whose time budget no longer fits in the plan's monthly run-seconds quota is not run: a
 * scheduled one is SKIPPED with the reason in logExecuted, an on-demand one fails with it.
 *
 * A run stops counting against its organization's cap on active runs (`releaseActiveRun`, idempotent)
 * once it is over for good: done, skipped, found finished already, or failed on its last delivery.
 */
export const MAX_VISITS_PER_RUN = 1500;
/** Kept free of the Lambda's remaining time for storing and dispatching after the optimizer. */
export const STORE_AND_DISPATCH_MARGIN_MS = 30_000;
/**
 * The deadline guard: the search stops with its best plan (`endedBy: "deadline"`) once less than this is
 * left of the Lambda's time, however long its budget was meant to run (a slow start, a clock that ran
 * ahead), so the plan is stored instead of lost to the timeout. Below the margin, so a run that keeps to
 * its budget never meets it.
 */
export const DEADLINE_GUARD_MS = 20_000;
/**
 * The run's budget holds: from the worker's start of a run to its result stored, a run takes at most its
 * `timeLimitSeconds` plus this margin (problem building, the explanation of dropped visits, the plan's checks and
 * the writes), whatever the travel provider does: the road matrix gets the budget less `MIN_SOLVE_MS` as its
 * deadline (attempts and timeouts shrink to fit it), the optimizer what is left.
 */
export const BUDGET_MARGIN_MS = 2000;
/** Kept for the optimizer out of the budget: a matrix that takes longer is given up (fallback or failure) in time. */
export const MIN_SOLVE_MS = 1000;
/** The explanation of dropped visits takes its cheap path (breaks kept where the plan has them) past the budget's end plus this. */
const EXPLAIN_GRACE_MS = 500;
/**
 * The explanation's hard cap, after the budget's end: the visits it has not reached by then are `unexplained`
 * (summary.explanationCut), so that checking, road geometry and the writes still fit in the margin.
 */
export const EXPLAIN_CAP_MS = 1000;
/** Kept of the margin for storing the result: road geometry is given up (the routes drawn straight) before it. */
export const STORE_RESERVE_MS = 500;
/** Less than this left before the geometry's deadline: it is not asked at all. */
const MIN_GEOMETRY_MS = 200;

export interface LogExecuted {
  status: "SUCCESS" | "SKIPPED" | "FAILED";
  message: string;
  routingResultId: string | null;
  dispatched: { success: number; failed: number } | null;
  lastExecute: string;
}

export interface RunClaimView {
  status: "ENQUEUED" | "SENT" | "RUNNING" | "DONE" | "SKIPPED" | "FAILED";
  resultId: string | null;
  attempts: number;
}

export interface RunWorkerPorts {
  now(): Date;
  appTimeZone: string;
  readClaim(organizationId: string, scheduleId: string, slot: string): Promise<RunClaimView | undefined>;
  startClaim(
    organizationId: string,
    scheduleId: string,
    slot: string,
    proposedResultId: string,
    now: Date,
    leaseMs: number,
  ): Promise<RunClaimView | undefined>;
  finishClaim(
    organizationId: string,
    scheduleId: string,
    slot: string,
    status: "DONE" | "SKIPPED" | "FAILED",
    message: string | null,
    now: Date,
  ): Promise<void>;
  findSchedule(organizationId: string, scheduleId: string): Promise<ScheduleRecord | undefined>;
  recordLogExecuted(organizationId: string, scheduleId: string, log: LogExecuted): Promise<void>;
  findConfiguration(organizationId: string, configurationId: string): Promise<RoutingConfiguration | undefined>;
  findHub(organizationId: string, hubId: string): Promise<Hub | undefined>;
  vehiclesForRun(organizationId: string, hubId: string, vehicleIds: string[]): Promise<Vehicle[]>;
  oldestActiveVisits(organizationId: string, hubId: string, max: number): Promise<Visit[]>;
  /** The hub's live routes (one per vehicle, written by each dispatch). */
  liveRoutes(organizationId: string, hubId: string): Promise<LiveRoute[]>;
  /** These visits of the hub as stored now (missing ones left out). */
  visitsByIds(organizationId: string, hubId: string, visitIds: readonly string[]): Promise<Visit[]>;
  /** Writes the vehicles' live routes of a dispatch (a route of an older result never replaces a newer one). */
  recordLiveRoutes(organizationId: string, routes: readonly LiveRoute[]): Promise<void>;
  solve(problem: RoutingProblem, options: SolveOptions): RoutingSolution | Promise<RoutingSolution>;
  /**
   * A plan the checks rejected (the model's constraints or the answered wall-clock values): never stored. The
   * composition root logs it with its seed and counts it (metric PlanRejected, alarmed). `outcome`: what was
   * stored instead, the plan without its failing routes, or nothing (the run failed).
   */
  planRejected?(report: PlanRejection): void;
  results: RoutingResultStore;
  markVisitDispatched: MarkVisitDispatched;
  /** A re-plan's dispatch returns the released visits it dropped to UNASSIGNED (absent: they stay as they are). */
  returnVisitToPool?: ReturnVisitToPool;
  /** The routing result a visit was last dispatched by (null when never, undefined when the visit is gone). */
  visitRoutingResultId: VisitRoutingResultId;
  /** Frees the run's slot of the organization's cap on active runs (idempotent: a redelivery frees nothing twice). */
  releaseActiveRun(organizationId: string, runKey: string): Promise<void>;
  /** Why a run of `budgetSeconds` may not start now (the plan's monthly run-seconds quota), or undefined. */
  runQuotaRefusal(organizationId: string, budgetSeconds: number, now: Date): Promise<string | undefined>;
  /** Records the run's usage item once (idempotent per run id: false when a redelivery finds it metered). */
  meterRun(usage: RunUsage): Promise<boolean>;
  /** Memory metered with a run, in MB. */
  memoryMb(): number;
  /**
   * Why the organization's plan may not use the named travel provider (naming those it may), or undefined;
   * asked when a run starts, since the plan may have changed since the profile was written (absent: allowed).
   */
  travelProviderRefusal?(organizationId: string, provider: string): Promise<string | undefined>;
  /**
   * The road-network matrix between `locations` from the named travel provider (through the hub's
   * cache, within the plan's travel-elements cap); undefined when the provider is the great-circle
   * estimate. Throws TravelMatrixError with the reason when it cannot be had.
   */
  roadMatrix(request: {
    organizationId: string;
    hubId: string;
    provider: string;
    locations: readonly Location[];
    now: Date;
    /** When the matrix must be had or given up (TravelMatrixError), so that the run keeps to its budget. */
    deadline: Date;
  }): Promise<{ kind: string; matrix: RoadMatrix } | undefined>;
  /**
   * The road lines of the plan's routes from the named provider's route service, within the plan's travel-elements
   * cap; undefined when its engine gives none. A provider's failure is not thrown: `failure` says why (tenant-safe).
   */
  roadGeometry?(request: {
    organizationId: string;
    hubId: string;
    provider: string;
    routes: readonly GeometryRoute[];
    now: Date;
    /** When asking must be over, so that the run keeps to its budget. */
    deadline: Date;
  }): Promise<RoadGeometry | undefined>;
}

export interface PlanRejection {
  organizationId: string;
  resultId: string;
  seed: number;
  violations: string[];
  outcome: "fallback" | "failed";
}

export interface DeliveryContext {
  /** SQS ApproximateReceiveCount of this delivery (1 = first). */
  receiveCount: number;
  /** Deliveries before SQS moves the message to the dead-letter queue. */
  maxReceiveCount: number;
  remainingTimeMs(): number;
}

export type RunOutcome =
  | { outcome: "done"; resultId: string; dispatched: LogExecuted["dispatched"] }
  | { outcome: "skipped"; reason: string }
  | { outcome: "failed"; reason: string; retry: true }
  | { outcome: "ignored"; reason: string }
  /** Another delivery holds the slot right now: retry later. */
  | { outcome: "busy"; retry: true };

/** A REOPTIMIZE result stored before its options were: what the route answered then (keepVehicle, new visits, idle vehicles). */
const defaultReoptimize: ReoptimizeOptions = {
  assigned: "keepVehicle",
  releaseVehicleIds: [],
  includeNewVisits: true,
  useIdleVehicles: true,
  autoDispatch: false,
};

export const shouldRetry = (outcome: RunOutcome) => "retry" in outcome && outcome.retry;

type Prepared =
  | { kind: "skip"; reason: string }
  | { kind: "ready"; input: RunPlanInput; configuration: RoutingConfiguration; budgetSeconds: number };

class RunFailure extends Error {}

/** A re-optimization's run: its options and the result whose day it re-plans. */
interface Replan {
  options: ReoptimizeOptions;
  parentResultId: string;
}

/** The visits of a result's plan (its routes' trips and its dropped visits). */
async function visitIdsOfResult(ports: RunWorkerPorts, organizationId: string, resultId: string): Promise<string[]> {
  const body = await ports.results.readBody(organizationId, resultId);
  if (!body) return [];
  return [...body.routes.flatMap((route) => route.trips.map((trip) => trip.visitId)), ...body.dropped.map((entry) => entry.visitId)];
}

async function prepare(
  ports: RunWorkerPorts,
  organizationId: string,
  configurationId: string,
  runAt: Date,
  replan?: Replan,
): Promise<Prepared> {
  const configuration = await ports.findConfiguration(organizationId, configurationId);
  // Retrying cannot bring a deleted profile back: skip (no result, no retry) instead of failing three times into the DLQ.
  if (!configuration)
    return { kind: "skip", reason: `The configuration profile ${configurationId} no longer exists; the run was skipped.` };
  const hub = await ports.findHub(organizationId, configuration.hubId);
  if (!hub) throw new RunFailure(`Hub ${configuration.hubId} of configuration profile ${configurationId} does not exist.`);
  const vehicles = await ports.vehiclesForRun(organizationId, hub._id, configuration.vehicleIds);
  if (vehicles.length === 0) {
    return {
      kind: "skip",
      reason: `No vehicles: configuration profile ${configuration.name} lists none that still belong to hub ${hub.name}, or the hub has none.`,
    };
  }
  // A live day: what is dispatched and under way stays (pinned visits count toward the run's cap).
  const routes = await ports.liveRoutes(organizationId, hub._id);
  const live =
    routes.length > 0
      ? liveVehiclesOf(
          routes,
          await ports.visitsByIds(
            organizationId,
            hub._id,
            routes.flatMap((r) => r.visitIds),
          ),
          // A re-optimization's own options; any other run on a live day: the profile's.
          replan?.options ?? { assigned: configuration.liveDayAssigned },
        )
      : [];
  const room = Math.max(0, MAX_VISITS_PER_RUN - pinnedCount(live));
  // Released visits are still ASSIGNED (not in the active index): they join the run's visits as free work.
  const released = live.flatMap((vehicle) => vehicle.released);
  const active =
    replan && !replan.options.includeNewVisits
      ? (await ports.visitsByIds(organizationId, hub._id, await visitIdsOfResult(ports, organizationId, replan.parentResultId)))
          .filter((visit) => isActiveVisitStatus(visit.status))
          .slice(0, room)
      : await ports.oldestActiveVisits(organizationId, hub._id, room);
  const visits = [...released, ...active];
  // A re-plan with nothing new still re-sequences what is on the road; any other run has nothing to do.
  if (visits.length === 0 && !(replan && live.some((vehicle) => vehicle.pinned.length > 0)))
    return { kind: "skip", reason: `No active (UNASSIGNED or ONGOING) visits in hub ${hub.name}.` };
  return {
    kind: "ready",
    configuration,
    budgetSeconds: replan?.options.timeLimitSeconds ?? configuration.timeLimitSeconds,
    input: {
      runAt,
      hub,
      configuration,
      vehicles,
      visits,
      appTimeZone: ports.appTimeZone,
      live,
      useIdleVehicles: replan ? replan.options.useIdleVehicles : configuration.liveDayUseIdleVehicles,
    },
  };
}

/** The seed of a run's search: from its id and delivery, so a retry searches differently; logged with a rejected plan. */
export function runSeed(resultId: string, receiveCount: number): number {
  let hash = 2166136261;
  for (const char of `${resultId}#${receiveCount}`) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0;
  return (hash % 1_000_000) + 1;
}

function budgetMs(budgetSeconds: number, delivery: DeliveryContext): number {
  return Math.max(1000, Math.min(budgetSeconds * 1000, delivery.remainingTimeMs() - STORE_AND_DISPATCH_MARGIN_MS));
}

/** What one optimizer pass of a run used (set once its travel matrix is had; seconds once the optimizer returned). */
interface RunMeter {
  pass?: { seconds: number; visits: number; vehicles: number; travelElements: number };
}

/** The UTC day a run started, from its result id's timestamp: the same on every delivery (`fallback` for an id without one). */
export function runDay(runId: string, fallback: Date): string {
  return utcDay(ID_PATTERN.test(runId) ? new Date(Number.parseInt(runId.slice(0, 8), 16) * 1000) : fallback);
}

/** Records the run's usage from its meter (nothing when the optimizer did not run in this delivery). */
async function recordUsage(
  ports: RunWorkerPorts,
  meter: RunMeter,
  run: Pick<RunUsage, "organizationId" | "runId" | "kind" | "scheduleId" | "hubId" | "configurationId">,
  outcome: RunUsage["outcome"],
): Promise<void> {
  if (!meter.pass) return;
  await ports.meterRun({
    ...run,
    day: runDay(run.runId, ports.now()),
    outcome,
    optimizerSeconds: roundSeconds(meter.pass.seconds),
    memoryMb: ports.memoryMb(),
    visits: meter.pass.visits,
    vehicles: meter.pass.vehicles,
    travelElements: meter.pass.travelElements,
    time: formatDateTimeUtc(ports.now()),
  });
}

/** The points a run's matrix must cover: every visit and vehicle location that is a WGS84 point. */
function runLocations(problem: RoutingProblem): Location[] {
  const isPoint = (l: Location) => Number.isFinite(l.lat) && Number.isFinite(l.lng) && Math.abs(l.lat) <= 90 && Math.abs(l.lng) <= 180;
  const all = [
    ...problem.visits.map((visit) => visit.location),
    ...problem.vehicles.flatMap((vehicle) => [vehicle.start, vehicle.end ?? vehicle.start]),
  ];
  return all.filter(isPoint);
}

/**
 * The run's travel: the profile's provider's road matrix (the problem's travel replaced by it), or the
 * great-circle estimate — the default, or the fallback when the provider fails and the profile says so.
 * A provider failure with `travelFallback: fail` fails the run with the provider's reason.
 */
async function planTravel(
  ports: RunWorkerPorts,
  prepared: Extract<Prepared, { kind: "ready" }>,
  problem: RoutingProblem,
  deadline: Date,
): Promise<TravelReport> {
  const { configuration } = prepared;
  const provider = configuration.travelProvider ?? "greatCircle";
  const startedAt = ports.now().getTime();
  const report = (
    source: string,
    matrix?: Pick<RoadMatrix, "elementsRequested" | "elementsCached">,
    fallbackReason: string | null = null,
  ): TravelReport => ({
    provider,
    source,
    elementsRequested: matrix?.elementsRequested ?? 0,
    elementsCached: matrix?.elementsCached ?? 0,
    matrixSeconds: roundSeconds((ports.now().getTime() - startedAt) / 1000),
    fallbackReason,
  });
  // The plan's providers: a run whose profile names one the plan no longer allows fails, whatever its fallback.
  const refused = provider === "greatCircle" ? undefined : await ports.travelProviderRefusal?.(configuration.organizationId, provider);
  if (refused) throw new RunFailure(`Travel provider ${provider}: ${refused}.`);
  try {
    const road = await ports.roadMatrix({
      organizationId: configuration.organizationId,
      hubId: prepared.input.hub._id,
      provider,
      locations: runLocations(problem),
      now: ports.now(),
      deadline,
    });
    if (!road) return report("greatCircle");
    problem.travel = matrixTravel(road.matrix.spec);
    return report(road.kind, road.matrix);
  } catch (error) {
    if (!(error instanceof TravelMatrixError)) throw error;
    if (configuration.travelFallback !== "greatCircle") throw new RunFailure(`Travel provider ${provider}: ${error.message}`);
    // The elements the provider answered before failing were charged (and cached): the report says so.
    return report("greatCircle", { elementsRequested: error.elementsAnswered, elementsCached: 0 }, error.message);
  }
}

/**
 * Runs the optimizer for a prepared run, checks its plan and stores the result (done). The run keeps to its
 * budget from `startedAt` (ms, the worker's start of the run): the matrix's deadline and the optimizer's time
 * come out of it. A plan that fails a check is never stored: the run stores the plan without the failing
 * routes (their visits dropped) when that one passes, and fails otherwise.
 */
async function optimiseAndStore(
  ports: RunWorkerPorts,
  prepared: Extract<Prepared, { kind: "ready" }>,
  resultId: string,
  delivery: DeliveryContext,
  meter: RunMeter,
  startedAt: number,
) {
  const planned = buildRunProblem(prepared.input);
  const budgetEnd = startedAt + budgetMs(prepared.budgetSeconds, delivery);
  const travel = await planTravel(ports, prepared, planned.problem, new Date(budgetEnd - MIN_SOLVE_MS));
  meter.pass = {
    seconds: 0,
    visits: planned.problem.visits.length,
    vehicles: planned.problem.vehicles.length,
    travelElements: travel.elementsRequested,
  };
  const solveStartedAt = performance.now();
  const seed = runSeed(resultId, delivery.receiveCount);
  const solution = await ports.solve(planned.problem, {
    seed,
    timeLimitMs: Math.max(MIN_SOLVE_MS, budgetEnd - ports.now().getTime()),
    objective: prepared.configuration.objective,
    mustStop: () => delivery.remainingTimeMs() < DEADLINE_GUARD_MS,
  });
  meter.pass.seconds = (performance.now() - solveStartedAt) / 1000;
  const organizationId = prepared.configuration.organizationId;
  const clock = () => ports.now().getTime();
  const explainOptions = { hurry: () => clock() > budgetEnd + EXPLAIN_GRACE_MS, deadline: budgetEnd + EXPLAIN_CAP_MS, clock };
  const checked = (candidate: RoutingSolution) => {
    const described = describeSolution(prepared.input, planned, candidate, explainDrops(planned, candidate, explainOptions));
    return { ...described, violations: planViolations(prepared.input, planned, candidate, described.body) };
  };
  let plan = checked(solution);
  if (plan.violations.length > 0) {
    const fallback = withoutFailingRoutes(solution, plan.violations);
    const second = fallback ? checked(fallback) : undefined;
    const passed = second !== undefined && second.violations.length === 0;
    ports.planRejected?.({ organizationId, resultId, seed, violations: plan.violations, outcome: passed ? "fallback" : "failed" });
    if (!passed) {
      throw new RunFailure(
        `The optimizer's plan broke its constraints and was not stored (seed ${seed}): ${plan.violations.slice(0, 3).join("; ")}${plan.violations.length > 3 ? ` and ${plan.violations.length - 3} more` : ""}.`,
      );
    }
    plan = second;
  }
  const geometry = await planGeometry(ports, prepared, planned.problem, plan.body, travel, budgetEnd + BUDGET_MARGIN_MS - STORE_RESERVE_MS);
  meter.pass.travelElements += geometry.report.elementsRequested;
  const { body } = geometry;
  await ports.results.complete(organizationId, resultId, body, {
    summary: { ...plan.summary, travel: { ...travel, geometry: geometry.report } },
    time: formatDateTimeUtc(ports.now()),
  });
  return { body, timeZone: planned.timeZone, planningDay: planned.planningDay };
}

type GeometryReport = NonNullable<TravelReport["geometry"]>;

/**
 * The routes' road lines when the plan drove the provider's roads (its matrix was used) and its engine can give them,
 * asked by `deadline` (epoch ms) at the latest; otherwise, or for the routes it could not have, the map draws straight
 * lines and the report says why. Never fails the run.
 */
async function planGeometry(
  ports: RunWorkerPorts,
  prepared: Extract<Prepared, { kind: "ready" }>,
  problem: RoutingProblem,
  body: RoutingResultBody,
  travel: TravelReport,
  deadline: number,
): Promise<{ body: RoutingResultBody; report: GeometryReport }> {
  const straight = (reason: string | null): { body: RoutingResultBody; report: GeometryReport } => ({
    body,
    report: { lines: "straight", routesWithRoads: 0, requests: 0, elementsRequested: 0, reason },
  });
  if (body.routes.length === 0) return straight(null);
  if (travel.source === "greatCircle")
    return straight(travel.provider === "greatCircle" ? null : "The plan's travel fell back to great circle: no road geometry was asked.");
  if (!ports.roadGeometry) return straight(`The ${travel.source} provider gives no road geometry here.`);
  if (deadline - ports.now().getTime() < MIN_GEOMETRY_MS)
    return straight("Road geometry was skipped: no time was left in the run's budget.");
  const vehicles = new Map(problem.vehicles.map((vehicle) => [vehicle.id, vehicle]));
  const routes: GeometryRoute[] = body.routes.flatMap((route) => {
    const vehicle = vehicles.get(route.vehicleId);
    if (!vehicle || route.trips.length === 0) return [];
    const back = vehicle.returnToEnd !== false ? [vehicle.end ?? vehicle.start] : [];
    return [{ vehicleId: route.vehicleId, waypoints: [vehicle.start, ...route.trips.map((trip) => trip.coordinate), ...back] }];
  });
  let outcome: RoadGeometry | undefined;
  try {
    outcome = await ports.roadGeometry({
      organizationId: prepared.configuration.organizationId,
      hubId: prepared.input.hub._id,
      provider: travel.provider,
      routes,
      now: ports.now(),
      deadline: new Date(deadline),
    });
  } catch {
    // The lines are a picture of the plan, not the plan: the run is stored without them.
    return straight("Road geometry could not be had.");
  }
  if (!outcome) return straight(`The ${travel.source} provider gives no road geometry here.`);
  const withRoads = body.routes.map((route) => {
    const legs = outcome.legsByVehicle.get(route.vehicleId);
    return legs ? { ...route, roadGeometry: { legs } } : route;
  });
  const routesWithRoads = outcome.legsByVehicle.size;
  return {
    body: { ...body, routes: withRoads },
    report: {
      lines: routesWithRoads === 0 ? "straight" : routesWithRoads === body.routes.length ? "road" : "mixed",
      routesWithRoads,
      requests: outcome.requests,
      elementsRequested: outcome.elementsRequested,
      reason: outcome.failure ?? null,
    },
  };
}

/**
 * The plan without the routes a violation names (`vehicleId: …`), their visits dropped for the search to be
 * explained; undefined when a violation names no route of the plan (then no part of it can be trusted).
 */
function withoutFailingRoutes(solution: RoutingSolution, violations: readonly string[]): RoutingSolution | undefined {
  const vehicleIds = new Set(solution.routes.map((route) => route.vehicleId));
  const failing = new Set<string>();
  for (const violation of violations) {
    const named = violation.slice(0, violation.indexOf(":"));
    if (!vehicleIds.has(named)) return undefined;
    failing.add(named);
  }
  const routes = solution.routes.filter((route) => !failing.has(route.vehicleId));
  const left = solution.routes.filter((route) => failing.has(route.vehicleId)).flatMap((route) => route.stops);
  return {
    ...solution,
    routes,
    dropped: [...solution.dropped, ...left.map((stop) => ({ visitId: stop.visitId, reason: "could not be fitted" as const }))],
    totals: {
      ...solution.totals,
      vehicles: routes.length,
      visits: routes.reduce((sum, route) => sum + route.stops.length, 0),
      distance: routes.reduce((sum, route) => sum + route.distance, 0),
      duration: routes.reduce((sum, route) => sum + route.duration, 0),
    },
  };
}

function failureReason(error: unknown): string {
  if (error instanceof RunFailure) return error.message;
  return `The run failed: ${error instanceof Error ? error.message : String(error)}`;
}

const isLastDelivery = (delivery: DeliveryContext) => delivery.receiveCount >= delivery.maxReceiveCount;

function retryNote(delivery: DeliveryContext): string {
  return isLastDelivery(delivery)
    ? ` Gave up after ${delivery.receiveCount} attempts; the run message moved to the dead-letter queue.`
    : ` Attempt ${delivery.receiveCount} of ${delivery.maxReceiveCount}; it will be retried.`;
}

/** Dispatches every vehicle of the result and records the dispatch on it. */
async function dispatchAll(
  ports: RunWorkerPorts,
  organizationId: string,
  hubId: string,
  resultId: string,
  body: RoutingResultBody,
  mark: MarkVisitDispatched,
  timeZone: string,
  plan: { configurationId: string; planningDay: string | undefined },
) {
  const dispatchedAt = ports.now();
  const dispatchTime = formatDateTimeUtc(dispatchedAt);
  // A run's own dispatch (autoDispatch) is the system's, whoever asked for the run.
  const assigned = await dispatchRoutes(body.routes, { organizationId, hubId, resultId }, mark, dispatchTime, {
    source: "system",
    userId: "system",
    at: dispatchedAt.toISOString(),
  });
  const unassigned = ports.returnVisitToPool
    ? await returnReleasedDrops(body.dropped, { organizationId, hubId }, ports.returnVisitToPool, dispatchedAt)
    : 0;
  const dispatched = unassigned > 0 ? { ...assigned, unassigned } : assigned;
  await ports.recordLiveRoutes(
    organizationId,
    liveRoutesOf(body.routes, {
      hubId,
      resultId,
      timeZone,
      dispatchedTime: dispatchTime,
      configurationId: plan.configurationId,
      ...(plan.planningDay !== undefined ? { planningDay: plan.planningDay } : {}),
    }),
  );
  await ports.results.recordDispatch(
    organizationId,
    resultId,
    // One id per run's dispatch: a redelivered run that dispatches again is announced once.
    {
      dispatchId: `auto_${resultId}`,
      dispatchedTime: dispatchTime,
      vehicleIds: body.routes.map((route) => route.vehicleId),
      ...dispatched,
    },
    dispatchTime,
  );
  return dispatched;
}

/** logExecuted SUCCESS and the claim DONE. */
async function succeed(
  ports: RunWorkerPorts,
  message: RoutingRunMessage,
  resultId: string,
  body: RoutingResultBody,
  collected: number,
  dispatched: LogExecuted["dispatched"],
): Promise<RunOutcome> {
  const { organizationId, scheduleId, slot } = message;
  const assigned = body.routes.reduce((sum, route) => sum + route.trips.length, 0);
  const now = ports.now();
  await ports.recordLogExecuted(organizationId, scheduleId, {
    status: "SUCCESS",
    message: `Routing result created: ${assigned} of ${collected} visits on ${body.routes.length} vehicles${dispatched ? `; dispatched ${dispatched.success}, failed ${dispatched.failed}` : ""}.`,
    routingResultId: resultId,
    dispatched,
    lastExecute: formatDateTimeUtc(now),
  });
  await ports.finishClaim(organizationId, scheduleId, slot, "DONE", null, now);
  return { outcome: "done", resultId, dispatched };
}

/**
 * A retry of a slot whose result is done already: no new plan. With autoDispatch the stored routes'
 * visits are dispatched again — each update is conditional on the visit still being active, so the
 * ones the earlier delivery assigned are not written twice; they count as dispatched when this result
 * assigned them, as failed otherwise (deleted, completed or cancelled meanwhile).
 */
async function resumeDone(
  ports: RunWorkerPorts,
  message: RoutingRunMessage,
  schedule: ScheduleRecord,
  result: RoutingResultRecord,
): Promise<RunOutcome> {
  const { organizationId } = message;
  const body = await ports.results.readBody(organizationId, result._id);
  if (!body) throw new RunFailure(`The stored routes of routing result ${result._id} could not be read.`);
  const markOnce = countingOwnAssignments(result._id, ports.markVisitDispatched, ports.visitRoutingResultId);
  const timeZone = result.summary?.timeZone ?? ports.appTimeZone;
  const dispatched = schedule.autoDispatch
    ? await dispatchAll(ports, organizationId, result.hubId, result._id, body, markOnce, timeZone, {
        configurationId: result.configurationId,
        planningDay: result.summary?.planningDay,
      })
    : null;
  return succeed(ports, message, result._id, body, result.summary?.visitsPlanned ?? 0, dispatched);
}

const NO_CLAIM = "no claim for this slot (expired or released)";

/** Over for good (not retried any more): the run's slot of the cap is freed. */
function isOver(outcome: RunOutcome, delivery: DeliveryContext): boolean {
  if (outcome.outcome === "busy") return false;
  if (outcome.outcome === "failed") return isLastDelivery(delivery);
  return true;
}

async function runSchedule(ports: RunWorkerPorts, message: RoutingRunMessage, delivery: DeliveryContext): Promise<RunOutcome> {
  const outcome = await runScheduleOnce(ports, message, delivery);
  // No claim: the tick released it un-sent (and the slot with it), or it expired; a new claim of the slot may hold the key now.
  if (isOver(outcome, delivery) && !(outcome.outcome === "ignored" && outcome.reason === NO_CLAIM)) {
    await ports.releaseActiveRun(message.organizationId, scheduleRunKey(message.scheduleId, message.slot));
  }
  return outcome;
}

async function runScheduleOnce(ports: RunWorkerPorts, message: RoutingRunMessage, delivery: DeliveryContext): Promise<RunOutcome> {
  const runStartedAt = ports.now().getTime();
  const { organizationId, scheduleId, slot } = message;
  const claim = await ports.readClaim(organizationId, scheduleId, slot);
  if (!claim) return { outcome: "ignored", reason: NO_CLAIM };
  if (claim.status === "DONE" || claim.status === "SKIPPED") return { outcome: "ignored", reason: `slot already ${claim.status}` };

  const skip = async (reason: string, schedule: ScheduleRecord | undefined): Promise<RunOutcome> => {
    const now = ports.now();
    await ports.finishClaim(organizationId, scheduleId, slot, "SKIPPED", reason, now);
    if (schedule) {
      await ports.recordLogExecuted(organizationId, scheduleId, {
        status: "SKIPPED",
        message: reason,
        routingResultId: null,
        dispatched: null,
        lastExecute: formatDateTimeUtc(now),
      });
    }
    return { outcome: "skipped", reason };
  };

  const schedule = await ports.findSchedule(organizationId, scheduleId);
  if (!schedule) return skip("The schedule was deleted before its run started.", undefined);
  if (!schedule.active) return skip("The schedule was paused before its run started.", schedule);
  if (schedule.updatedTime !== message.scheduleUpdatedTime) {
    return skip(
      `The schedule was changed (at ${schedule.updatedTime} UTC) after this run was enqueued; the run follows the new timetable instead.`,
      schedule,
    );
  }

  const started = await ports.startClaim(
    organizationId,
    scheduleId,
    slot,
    newId(ports.now()),
    ports.now(),
    delivery.remainingTimeMs() + 60_000,
  );
  if (!started) {
    const again = await ports.readClaim(organizationId, scheduleId, slot);
    if (again && (again.status === "DONE" || again.status === "SKIPPED"))
      return { outcome: "ignored", reason: `slot already ${again.status}` };
    return { outcome: "busy", retry: true };
  }
  const resultId = started.resultId as string;
  let resultCreated = false;
  const meter: RunMeter = {};
  let usageRun: Parameters<typeof recordUsage>[2] | undefined;
  try {
    // An earlier delivery finished planning and stored the result, then failed (e.g. while dispatching):
    // never plan again under the same result id — only finish what is left. A first start has no
    // earlier delivery, so only a retry pays for this read.
    const earlier = started.attempts > 1 ? await ports.results.find(organizationId, resultId) : undefined;
    if (earlier?.status === "done") {
      resultCreated = true;
      return await resumeDone(ports, message, schedule, earlier);
    }

    // Plan from the later of the slot's instant and now: a late delivery (a retry) cannot plan in the past,
    // and a message handled before its slot (clock skew) still plans the slot it was claimed for.
    const runAt = new Date(Math.max(ports.now().getTime(), Date.parse(message.scheduledFor)));
    const prepared = await prepare(ports, organizationId, schedule.configurationId, runAt);
    if (prepared.kind === "skip") return await skip(prepared.reason, schedule);
    const overQuota = await ports.runQuotaRefusal(organizationId, prepared.budgetSeconds, ports.now());
    if (overQuota) return await skip(`Skipped: ${overQuota}`, schedule);

    const time = formatDateTimeUtc(runAt);
    const result: RoutingResultRecord = {
      _id: resultId,
      name: `${schedule.name} - ${resultNameTime(new Date(message.scheduledFor), ports.appTimeZone)}`,
      hubId: prepared.input.hub._id,
      configurationId: prepared.configuration._id,
      scheduleId,
      createdFrom: "SCHEDULER",
      parentResultId: null,
      status: "ongoing",
      message: null,
      summary: null,
      dispatch: null,
      runTime: time,
      organizationId,
      createdBy: "scheduler",
      createdTime: time,
      updatedTime: time,
      finishedTime: null,
    };
    await ports.results.upsertOngoing(result);
    resultCreated = true;
    usageRun = {
      organizationId,
      runId: resultId,
      kind: "scheduled",
      scheduleId,
      hubId: prepared.input.hub._id,
      configurationId: prepared.configuration._id,
    };
    const { body, timeZone, planningDay } = await optimiseAndStore(ports, prepared, resultId, delivery, meter, runStartedAt);
    await recordUsage(ports, meter, usageRun, "done");

    const dispatched = schedule.autoDispatch
      ? await dispatchAll(ports, organizationId, result.hubId, resultId, body, ports.markVisitDispatched, timeZone, {
          configurationId: result.configurationId,
          planningDay,
        })
      : null;
    return await succeed(ports, message, resultId, body, prepared.input.visits.length, dispatched);
  } catch (error) {
    const reason = failureReason(error) + retryNote(delivery);
    const now = ports.now();
    // Best effort: the failure must reach logExecuted and the claim even if the result cannot be written.
    if (resultCreated) await ports.results.fail(organizationId, resultId, reason, formatDateTimeUtc(now)).catch(() => undefined);
    if (usageRun && isLastDelivery(delivery)) await recordUsage(ports, meter, usageRun, "failed").catch(() => undefined);
    await ports.recordLogExecuted(organizationId, scheduleId, {
      status: "FAILED",
      message: reason,
      routingResultId: resultCreated ? resultId : null,
      dispatched: null,
      lastExecute: formatDateTimeUtc(now),
    });
    await ports.finishClaim(organizationId, scheduleId, slot, "FAILED", reason, now);
    return { outcome: "failed", reason, retry: true };
  }
}

async function runOnDemand(ports: RunWorkerPorts, message: OnDemandRunMessage, delivery: DeliveryContext): Promise<RunOutcome> {
  const outcome = await runOnDemandOnce(ports, message, delivery);
  if (isOver(outcome, delivery)) await ports.releaseActiveRun(message.organizationId, onDemandRunKey(message.resultId));
  return outcome;
}

async function runOnDemandOnce(ports: RunWorkerPorts, message: OnDemandRunMessage, delivery: DeliveryContext): Promise<RunOutcome> {
  const runStartedAt = ports.now().getTime();
  const { organizationId, resultId } = message;
  const result = await ports.results.find(organizationId, resultId);
  if (!result) return { outcome: "ignored", reason: "the result no longer exists" };
  const replan: Replan | undefined =
    result.createdFrom === "REOPTIMIZE" && result.parentResultId !== null
      ? { options: result.reoptimize ?? defaultReoptimize, parentResultId: result.parentResultId }
      : undefined;
  if (result.status === "done") {
    // A re-plan asked to dispatch itself whose delivery stored it and then failed: finish the dispatch only.
    if (replan?.options.autoDispatch && result.dispatch === null) {
      const body = await ports.results.readBody(organizationId, resultId);
      if (body) {
        const mark = countingOwnAssignments(resultId, ports.markVisitDispatched, ports.visitRoutingResultId);
        const dispatched = await dispatchAll(
          ports,
          organizationId,
          result.hubId,
          resultId,
          body,
          mark,
          result.summary?.timeZone ?? ports.appTimeZone,
          {
            configurationId: result.configurationId,
            planningDay: result.summary?.planningDay,
          },
        );
        return { outcome: "done", resultId, dispatched };
      }
    }
    return { outcome: "ignored", reason: "the result is done already" };
  }
  const meter: RunMeter = {};
  let usageRun: Parameters<typeof recordUsage>[2] | undefined;
  try {
    const prepared = await prepare(ports, organizationId, result.configurationId, ports.now(), replan);
    if (prepared.kind === "skip") {
      await ports.results.fail(organizationId, resultId, prepared.reason, formatDateTimeUtc(ports.now()));
      return { outcome: "skipped", reason: prepared.reason };
    }
    const overQuota = await ports.runQuotaRefusal(organizationId, prepared.budgetSeconds, ports.now());
    if (overQuota) {
      await ports.results.fail(organizationId, resultId, overQuota, formatDateTimeUtc(ports.now()));
      return { outcome: "skipped", reason: overQuota };
    }
    usageRun = {
      organizationId,
      runId: resultId,
      kind: "onDemand",
      scheduleId: null,
      hubId: prepared.input.hub._id,
      configurationId: prepared.configuration._id,
    };
    const stored = await optimiseAndStore(ports, prepared, resultId, delivery, meter, runStartedAt);
    await recordUsage(ports, meter, usageRun, "done");
    const dispatched = replan?.options.autoDispatch
      ? await dispatchAll(
          ports,
          organizationId,
          result.hubId,
          resultId,
          stored.body,
          countingOwnAssignments(resultId, ports.markVisitDispatched, ports.visitRoutingResultId),
          stored.timeZone,
          { configurationId: result.configurationId, planningDay: stored.planningDay },
        )
      : null;
    return { outcome: "done", resultId, dispatched };
  } catch (error) {
    const reason = failureReason(error) + retryNote(delivery);
    await ports.results.fail(organizationId, resultId, reason, formatDateTimeUtc(ports.now()));
    if (usageRun && isLastDelivery(delivery)) await recordUsage(ports, meter, usageRun, "failed").catch(() => undefined);
    return { outcome: "failed", reason, retry: true };
  }
}

export function processRunMessage(ports: RunWorkerPorts, message: RunQueueMessage, delivery: DeliveryContext): Promise<RunOutcome> {
  return message.kind === "schedule" ? runSchedule(ports, message, delivery) : runOnDemand(ports, message, delivery);
}
