// Entry point: validate and index the problem, build a first solution by regret insertion, (under the
// hierarchical objective) minimise the fleet, then improve distance by ruin-and-recreate with simulated
// annealing, and report the best solution met as a schedule per vehicle.
import { constructByRegret } from "./construct.ts";
import { seedInitialRoutes } from "./warm-start.ts";
import { buildInstance, type Instance } from "./instance.ts";
import { improveLocally } from "./local-search.ts";
import type {
  DroppedVisit,
  Elite,
  RoutingEnd,
  RoutingProblem,
  RoutingSolution,
  SolveOptions,
  TripStop,
  VehicleRoute,
  ScheduledBreak,
} from "./model.ts";
import { acceptOnPenalisedCost, Penalties, PenalisedStep } from "./penalised.ts";
import { Random } from "./random.ts";
import type { Route } from "./route-state.ts";
import { cheapenFleet, type FleetPhaseEnd, mayCheapen, minimiseFleet, type PenalisedRepair } from "./fleet-min.ts";
import { minimiseRoutes } from "./route-min.ts";
import { RuinRecreate } from "./ruin-recreate.ts";
import { type AnnealOptions, anneal, Budget, convergenceFor, horizonCoolingSteps, Incumbent } from "./search.ts";
import { Solution } from "./solution.ts";

export type * from "./model.ts";
export { euclideanTravel, greatCircleTravel } from "./matrix.ts";

export const DEFAULT_TIME_LIMIT_MS = 10_000;
/** Share of the budget the hierarchical objective may spend on removing vehicles. */
const FLEET_MINIMISATION_SHARE = 0.5;
/**
 * The SISR fleet phases (`minimiseFleet`, `cheapenFleet`) on a schedule of iterations — the lower of the iteration
 * limit and the early stop's horizon, which exists whether or not the early stop is on — so that a seed's fleet
 * does not move with the machine's load; the time budget's `FLEET_MINIMISATION_SHARE` is then only a cap. Off: the
 * phases share the budget's time — paired level, a per-day spread no lower, and a seed's plan still moves with the
 * load through the distance phase (README, "Round five, 2026-11-28 afternoon").
 */
const FLEET_BY_ITERATIONS = false;
/** With `FLEET_BY_ITERATIONS`: the share of that iteration schedule the fleet phases may take. */
const FLEET_ITERATION_SHARE = 0.2;
/** Above this many visits per route in the first solution, fleet minimisation uses SISR rather than ejection chains. */
const LONG_ROUTE_VISITS = 15;
/**
 * Annealing temperatures, relative to the mean distance per routed visit of the first solution (SISR's 100 → 1
 * on Gehring–Homberger coordinates is about this): hotter wastes the short budgets runs get on a random walk,
 * colder loses its way out of the first basin on long routes (README, "Annealing temperature").
 */
const START_TEMPERATURE = 3;
const END_TEMPERATURE = 0.03;
/**
 * The distance phase's temperature on a schedule of steps (search.ts, `AnnealOptions.stepSchedule`), so that a
 * seed's path does not move with the machine's load. "horizon": cold after `horizonCoolingSteps` — 70 % of
 * the steps the early stop's horizon (or the iteration limit when lower) leaves after the fleet phases, whether or
 * not the early stop is on, capped per size from the time budget so that 300-visit days reach the cold end within
 * 15 CPU-s — then held there; the time budget only cuts the path short. A seed's plan then no longer moves with the
 * load (19 of 24 runs of 100-visit days the same plan in two benches, the default 1 of 24) at a paired cost level
 * with the time schedule (−0.15 ± 0.42 and −0.01 ± 0.46 % on 100-visit days, +0.32 ± 0.92 % on 300-visit days;
 * README, "Round seven, 2026-11-28 evening"; the estimated length of round six moved with the load and was
 * removed). **"off" (the default)**: it follows the time used —
 * "horizon" costs +0.13 ± 0.05 % on Solomon's distance objective, its rate constant is one VM's, and the seed
 * repeatability it buys does not reach a dispatcher, whose every run draws a new seed (run-worker.ts, `runSeed`;
 * README, "Round seven", the decision at the merge).
 */
const STEP_SCHEDULE = "off" as "off" | "horizon";
/**
 * The fleet phases' second chance: at this share of the schedule, a run whose fleet phase ended with the smaller
 * fleet within reach (`minimiseFleet` answered "nearMiss") or whose plan still has a used vehicle that an idle one
 * undercuts goes back to its best plan and tries again, for at most `SECOND_CHANCE_SHARE` of the schedule:
 * `minimiseFleet` first where it came near, then `cheapenFleet`, starting with the costly routes its first call did
 * not get to. The first calls' tries often fail by a visit or two, and the cheaper-fleet step's share holds about
 * one try, on a route drawn at random (README, "Round ten"); from a plan the annealing has reworked, the second
 * chance reached the reference fleet on more 100-visit runs (README, "Round eleven"). Runs with neither (every
 * Solomon and Gehring–Homberger instance under the distance objective) are not touched...
 */
const SECOND_CHANCE_AT = 0.6;
const SECOND_CHANCE_SHARE = 0.15;
/**
 * ...and only in a run that has taken this share of its scheduled iterations (the early stop's cooling horizon, or
 * the iteration limit) by then, where the steps it takes cost no measurable distance. A 100-visit day at 5 CPU-s is
 * at ~0.5 of its horizon (paired against no second chance: −0.09 ± 0.22 %); a 300-visit day at 15 CPU-s at ~0.03,
 * and there the second chance took 15 % of a budget the search is short of and found no cheaper fleet: plans
 * +2.37 ± 0.64 % longer over 10 days (README, "Round eleven").
 */
const SECOND_CHANCE_HORIZON = 0.3;

export function solveRouting(problem: RoutingProblem, options: SolveOptions = {}): RoutingSolution {
  return solveRoutingWithElite(problem, options).solution;
}

/** `solveRouting`, also returning the best solution as an elite (its objective), for the parallel search. */
export function solveRoutingWithElite(problem: RoutingProblem, options: SolveOptions = {}): { solution: RoutingSolution; best: Elite } {
  const objective = options.objective ?? "hierarchical";
  // The budget covers everything, matrix building included.
  const now = options.now ?? Date.now;
  const startedAt = now();
  const instance = buildInstance(problem);
  const budget = new Budget(
    now,
    (options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS) - (now() - startedAt),
    options.maxIterations ?? Infinity,
    options.earlyStop === false ? undefined : convergenceFor(instance.routable.length),
    options.mustStop,
  );
  const solution = new Solution(instance, {
    vehicle: objective === "hierarchical" ? vehicleWeight(instance) : 0,
    underload: options.underloadCost ?? 1000,
  });
  const random = new Random(options.seed ?? 1);

  if (problem.initialRoutes) seedInitialRoutes(solution, problem.initialRoutes, problem);
  constructByRegret(solution);
  improveLocally(solution);
  const incumbent = new Incumbent(solution);
  const ruinRecreate = new RuinRecreate(solution, random);
  // The iterations the run is scheduled for: the limit, or the early stop's horizon, which exists whether or not
  // the early stop is on — a length no clock reading moves (the switches below that schedule by steps).
  const scheduledIterations = Math.min(options.maxIterations ?? Infinity, convergenceFor(instance.routable.length).horizon);
  // The vehicles whose routes the cheaper-fleet step tried to empty and could not: its second chance tries the others first.
  const cheapenFailed = new Uint8Array(instance.vehicleCount);
  let penalised: PenalisedRepair | undefined;
  let fleetEnd: FleetPhaseEnd | undefined;
  if (objective === "hierarchical") {
    // The ejection search of route minimisation grows quickly with the route length: long routes get SISR's.
    // The ejection search moves single visits: with pickup-and-delivery pairs, SISR's (which moves pairs whole) is used.
    const ejection = meanVisitsPerRoute(solution) <= LONG_ROUTE_VISITS && !instance.hasPairs;
    const fleetShare = FLEET_BY_ITERATIONS && !ejection ? FLEET_ITERATION_SHARE : FLEET_MINIMISATION_SHARE;
    penalised = FLEET_PENALISED && !ejection && !instance.hasPairs ? fleetPenalised(solution, ruinRecreate, random) : undefined;
    if (FLEET_BY_ITERATIONS && !ejection)
      budget.phaseSchedule = {
        iterations: scheduledIterations,
        timeCap: FLEET_MINIMISATION_SHARE,
      };
    if (ejection) {
      minimiseRoutes(solution, budget, FLEET_MINIMISATION_SHARE, incumbent, random);
      // Its perturbations leave the routes untidy.
      improveLocally(solution);
      incumbent.offer(solution);
    } else fleetEnd = minimiseFleet(solution, ruinRecreate, budget, fleetShare, incumbent, random, penalised);
    // As many vehicles, but cheaper ones where an idle vehicle costs less than a used one.
    cheapenFleet(solution, ruinRecreate, budget, fleetShare, incumbent, random, penalised, cheapenFailed);
    budget.phaseSchedule = undefined;
  }
  const scale = meanDistancePerVisit(solution);
  budget.scale = totalDistance(solution);
  anneal({
    solution,
    ruinRecreate,
    budget,
    random,
    incumbent,
    schedule: { startTemperature: START_TEMPERATURE * scale, endTemperature: END_TEMPERATURE * scale },
    polish: improveLocally,
    ...(objective === "hierarchical"
      ? {
          midway: {
            at: SECOND_CHANCE_AT,
            run: () => {
              if (budget.iterations < SECOND_CHANCE_HORIZON * scheduledIterations) return;
              // A fleet phase that ended with the smaller fleet within reach tries it once more first.
              const fewer = fleetEnd === "nearMiss";
              // The annealing's plan has the incumbent's fleet (a step that changes it is never accepted unless it
              // serves more); asked of it, a run with nothing to try keeps its path.
              if (!fewer && !mayCheapen(solution)) return;
              solution.restore(incumbent.snapshot);
              const until = budget.progress() + SECOND_CHANCE_SHARE;
              if (fewer) minimiseFleet(solution, ruinRecreate, budget, until, incumbent, random, penalised);
              cheapenFleet(solution, ruinRecreate, budget, until, incumbent, random, penalised, cheapenFailed);
            },
          },
        }
      : {}),
    ...(STEP_SCHEDULE === "horizon"
      ? {
          stepSchedule: {
            steps: horizonCoolingSteps(
              instance.routable.length,
              options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS,
              scheduledIterations,
              budget.iterations,
            ),
          },
        }
      : {}),
    ...(PENALISED_STEP !== "off" && !instance.hasPairs ? penalisedRecreate(solution, ruinRecreate, random, scale) : {}),
    ...(options.exchange ? { exchange: options.exchange } : {}),
  });
  solution.restore(incumbent.snapshot);
  return {
    solution: describe(problem, instance, solution, budget.iterations, budget.endedBy ?? "budget"),
    best: { dropped: incumbent.dropped, cost: incumbent.cost, snapshot: incumbent.snapshot },
  };
}

/**
 * The distance phase's step with penalised infeasibility (penalised.ts): "first" inserts every removed visit at
 * penalised cost, "fallback" recreates feasibly first and inserts at penalised cost only what fits nowhere, each
 * then improves the touched visits under penalised cost and repairs. Off: every variant measured worse, paired
 * against the plain step (shared/routing/README.md, "Round four, stage gate").
 */
const PENALISED_STEP: "off" | "first" | "fallback" | "accept" = "off";
/**
 * The penalised step in the SISR fleet phases only (`minimiseFleet`, `cheapenFleet`): a repair step whose feasible
 * recreate left visits out puts them in at penalised cost, improves the touched visits and repairs, then recreates
 * feasibly what the repair took out, never opening a vehicle; the distance phase keeps the plain step. Off: at 300
 * visits a step costs ~80 plain ones and the fleet phase's patience runs out before a route is emptied — a costlier
 * fleet on 2 of the 3 runs measured (README, "Round four, 2026-11-28 morning").
 */
const FLEET_PENALISED = false;

function fleetPenalised(solution: Solution, ruinRecreate: RuinRecreate, random: Random): PenalisedRepair {
  const step = new PenalisedStep(solution, penaltiesFor(solution, meanDistancePerVisit(solution)), random);
  return (removed) => {
    step.insertAndImprove(ruinRecreate.order([...solution.unassigned]), removed);
    if (solution.unassigned.size > 0) ruinRecreate.recreate([...solution.unassigned], false);
  };
}

function penaltiesFor(solution: Solution, scale: number): Penalties {
  const { instance } = solution;
  let demand = 0;
  for (const v of instance.routable) for (let d = 0; d < instance.dims; d++) demand += instance.demand[v * instance.dims + d]!;
  return new Penalties(scale, demand / Math.max(1, instance.routable.length));
}

/**
 * A step whose recreate comes within this factor of the acceptance threshold gets the local search. The factor is
 * of the whole cost, fleet weight included: under the hierarchical objective a fixed-cost unit weighs ~6·10⁶ on a
 * 100-visit day, so 1.01 lets through steps up to about half the plan's distance over the threshold — nearly every
 * step; 1 (accepted steps only) measured worse (README, "Round four, 2026-11-28 late morning").
 */
const NEAR_ACCEPTED = 1.01;

function penalisedRecreate(
  solution: Solution,
  ruinRecreate: RuinRecreate,
  random: Random,
  scale: number,
): Pick<AnnealOptions, "recreate" | "penalised"> {
  const step = new PenalisedStep(solution, penaltiesFor(solution, scale), random);
  if (PENALISED_STEP === "first") {
    return {
      recreate: () => {
        step.insertAndImprove(ruinRecreate.order([...solution.unassigned]));
        if (solution.unassigned.size > 0) ruinRecreate.recreate([...solution.unassigned], true);
      },
    };
  }
  if (PENALISED_STEP === "accept") return acceptOnPenalisedCost(solution, ruinRecreate, step, NEAR_ACCEPTED);
  // Feasible recreate first (cheap, pruned by feasibility); penalised insertion only for what fits nowhere; the
  // local search on the removed visits.
  return {
    recreate: (removed, acceptance) => {
      ruinRecreate.recreate([...solution.unassigned], true);
      // Only near-accepted steps are worth the local search (most steps are rejected: they stay as cheap as before).
      if (solution.droppedWeight > acceptance.dropped || solution.cost > acceptance.cost * NEAR_ACCEPTED) return;
      step.insertAndImprove(ruinRecreate.order([...solution.unassigned]), removed);
      if (solution.unassigned.size > 0) ruinRecreate.recreate([...solution.unassigned], true);
    },
  };
}

/** Larger than any distance total, so one vehicle less always pays. */
function vehicleWeight(instance: Instance): number {
  let longest = 0;
  for (const d of instance.distance) longest = Math.max(longest, d);
  return (instance.visitCount + instance.vehicleCount + 1) * (longest + 1);
}

function meanVisitsPerRoute(solution: Solution): number {
  const used = solution.vehiclesUsed;
  return used > 0 ? (solution.instance.routable.length - solution.unassigned.size) / used : 0;
}

function meanDistancePerVisit(solution: Solution): number {
  let distance = 0;
  let visits = 0;
  for (const route of solution.routes) {
    distance += route.distance;
    visits += route.visitCount;
  }
  return visits > 0 && distance > 0 ? distance / visits : 1;
}

/**
 * An elite (e.g. the last one a failed search thread shared) as a solution of `problem`: the instance is
 * built again (the numbering is the same in every search of the same problem).
 */
export function describeElite(
  problem: RoutingProblem,
  elite: Elite,
  options: Pick<SolveOptions, "objective" | "underloadCost">,
  endedBy: RoutingEnd,
): RoutingSolution {
  const instance = buildInstance(problem);
  const solution = new Solution(instance, {
    vehicle: (options.objective ?? "hierarchical") === "hierarchical" ? vehicleWeight(instance) : 0,
    underload: options.underloadCost ?? 1000,
  });
  solution.restore(elite.snapshot);
  return describe(problem, instance, solution, 0, endedBy);
}

function totalDistance(solution: Solution): number {
  let distance = 0;
  for (const route of solution.routes) distance += route.distance;
  return distance > 0 ? distance : 1;
}

function describe(
  problem: RoutingProblem,
  instance: Instance,
  solution: Solution,
  iterations: number,
  endedBy: RoutingEnd,
): RoutingSolution {
  const routes = solution.routes.filter((route) => route.visitCount > 0).map((route) => schedule(problem, instance, solution, route));
  const dropped: DroppedVisit[] = [];
  problem.visits.forEach((visit, v) => {
    const reason = instance.drops.get(v) ?? (solution.routeOf[v]! < 0 ? "could not be fitted" : undefined);
    if (reason) dropped.push({ visitId: visit.id, reason });
  });
  return {
    routes,
    dropped,
    totals: {
      vehicles: routes.length,
      visits: routes.reduce((sum, r) => sum + r.stops.length, 0),
      distance: routes.reduce((sum, r) => sum + r.distance, 0),
      duration: routes.reduce((sum, r) => sum + r.duration, 0),
      fixedCost: solution.fixedCostUsed,
    },
    iterations,
    endedBy,
  };
}

/** Times along the route, leaving the start as early as possible without adding waiting. */
function schedule(problem: RoutingProblem, instance: Instance, solution: Solution, route: Route): VehicleRoute {
  const { nodes, time } = route;
  const { location, locationCount, distance, service, dims, demand } = instance;
  const { open } = solution.windows;
  const departure = route.fEarliest[nodes.length - 1]!;
  const stops: TripStop[] = [];
  const breaks: ScheduledBreak[] = [];
  const load = new Array<number>(dims).fill(0);
  let clock = departure;
  let at = location[nodes[0]!]!;
  let travelTime = 0;
  let waitingTime = 0;
  let serviceTime = 0;
  let driven = 0;
  for (let i = 1; i < nodes.length; i++) {
    const node = nodes[i]!;
    if (instance.isBreak[node]) {
      const start = Math.max(clock, open[node]!);
      breaks.push({ start, end: start + service[node]!, afterStop: stops.length - 1 });
      waitingTime += start - clock;
      clock = start + service[node]!;
      continue;
    }
    const leg = at * locationCount + location[node]!;
    const arrival = clock + time[leg]!;
    travelTime += time[leg]!;
    driven += distance[leg]!;
    at = location[node]!;
    if (i === nodes.length - 1) {
      clock = arrival;
      break;
    }
    const start = Math.max(arrival, open[node]!);
    for (let d = 0; d < dims; d++) load[d] = load[d]! + demand[node * dims + d]!;
    // A pair's load counts as delivered at its delivery.
    if (instance.hasPairs && instance.partner[node]! >= 0 && !instance.isPickup[node]) {
      for (let d = 0; d < dims; d++) load[d] = load[d]! - instance.pairLoad[node * dims + d]!;
    }
    stops.push({
      visitId: problem.visits[node]!.id,
      arrival,
      waiting: start - arrival,
      start,
      departure: start + service[node]!,
      distance: distance[leg]!,
      load: [...load],
    });
    waitingTime += start - arrival;
    serviceTime += service[node]!;
    clock = start + service[node]!;
  }
  return {
    vehicleId: problem.vehicles[route.vehicle]!.id,
    departure,
    arrival: clock,
    stops,
    breaks,
    distance: driven,
    duration: clock - departure,
    travelTime,
    waitingTime,
    serviceTime,
    load,
    underload: route.underload,
  };
}
