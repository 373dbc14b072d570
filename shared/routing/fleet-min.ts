// Fleet minimisation (SISR, section 6), used for long routes where route-min.ts's ejection search is too
// slow to be the main step: empty a route, then run ruin-and-recreate without opening vehicles until every visit is back in,
// accepting a step when fewer visits are left out or when the ones left out have been absent less often
// (absence counters steer the search to hard visits). A repair that stalls also tries route-min.ts's ejection for
// the visit left out most often.
import type { Random } from "./random.ts";
import type { RuinRecreate } from "./ruin-recreate.ts";
import { ROUTE_MINIMISATION_PARAMETERS, RouteMinimiser, stagnationLimit, vehicleLowerBound } from "./route-min.ts";
import type { Budget, Incumbent } from "./search.ts";
import type { Solution } from "./solution.ts";

/**
 * Why the fleet phase ended: at the vehicle lower bound or with no route left to empty ("bound"); after
 * `ROUTE_TRIES` routes given up at one fleet size, at least one of which did not lack room (`lacksRoom`: the smaller
 * fleet came within reach, "nearMiss") or none ("tries"); after two routes in a row that lacked room ("outOfReach");
 * or at its share of the schedule.
 */
export type FleetPhaseEnd = "bound" | "tries" | "nearMiss" | "outOfReach" | "schedule";

export function minimiseFleet(
  solution: Solution,
  ruinRecreate: RuinRecreate,
  budget: Budget,
  until: number,
  incumbent: Incumbent,
  random: Random,
  penalised?: PenalisedRepair,
): FleetPhaseEnd {
  const { instance } = solution;
  const repair = new Repair(solution, ruinRecreate, random, penalised);
  const fewestVehicles = vehicleLowerBound(solution);
  const patience = stagnationLimit(instance.routable.length);
  // Visits the first solution left out (regret insertion leaves some when the fleet is tight) come in
  // first: removing vehicles while they wait would leave them a fleet too small to take them back.
  // Until a patience passes without one fewer left out (or twice that in all, as for an emptied route:
  // the absence counters let the count go up and down again), no route is emptied; then the fewest left
  // out so far is the target every smaller fleet must keep.
  let repairing = incumbent.unassigned > 0;
  let target = 0;
  // Vehicles whose route could not be emptied within the patience: not tried again until a route is emptied.
  const failed = new Uint8Array(instance.vehicleCount);
  let tries = 0;
  let lastGain = budget.iterations;
  let emptiedAt = budget.iterations;
  let emptied: EmptiedRoute | undefined;
  // Visits left out before the route was emptied, and the fewest left out at once since.
  let outBefore = 0;
  let fewestOut = Infinity;
  // Routes given up in a row at this fleet size that lacked room (`lacksRoom`).
  let outOfReach = 0;
  let end: FleetPhaseEnd = "schedule";
  // A route given up at this fleet size that did not lack room (`lacksRoom`): the smaller fleet came within reach.
  let nearMiss = false;
  while (budget.phaseProgress() < until) {
    if (solution.unassigned.size <= target) {
      repairing = false;
      incumbent.offer(solution);
      // After a repair gave up, a later step may serve one more: that is the new target.
      target = Math.min(target, incumbent.unassigned);
      failed.fill(0);
      tries = 1;
      outOfReach = 0;
      nearMiss = false;
      outBefore = solution.unassigned.size;
      emptied = solution.vehiclesUsed <= fewestVehicles ? undefined : emptyARoute(solution, random, failed);
      if (!emptied) {
        end = "bound";
        break;
      }
      fewestOut = solution.unassigned.size;
      repair.restart();
      lastGain = emptiedAt = budget.iterations;
    } else if (repairing && (budget.iterations - lastGain >= patience || budget.iterations - emptiedAt >= 2 * patience)) {
      repairing = false;
      target = incumbent.unassigned;
      solution.restore(incumbent.snapshot);
      continue;
    } else if (emptied && (budget.iterations - lastGain >= patience || budget.iterations - emptiedAt >= 2 * patience)) {
      // This route's visits do not fit elsewhere (yet): back to the last complete solution, and another route.
      failed[emptied.vehicle] = 1;
      // Twice in a row, and a fleet this small lacks room. A route whose visits only its own vehicle may
      // serve says nothing about the others: it leaves the count as it is.
      if (emptied.movable > 0) {
        const short = lacksRoom(emptied, fewestOut - outBefore);
        outOfReach = short ? outOfReach + 1 : 0;
        if (!short) nearMiss = true;
      }
      solution.restore(incumbent.snapshot);
      if (outOfReach >= 2 || ++tries > ROUTE_TRIES) {
        end = outOfReach >= 2 ? "outOfReach" : nearMiss ? "nearMiss" : "tries";
        break;
      }
      outBefore = solution.unassigned.size;
      emptied = emptyARoute(solution, random, failed, true);
      if (!emptied) {
        end = "bound";
        break;
      }
      fewestOut = solution.unassigned.size;
      repair.restart();
      lastGain = emptiedAt = budget.iterations;
    }
    const step = repair.step(budget);
    if (step === "fewer") lastGain = budget.iterations;
    // By priority weight, not count: bringing back one high-priority visit for two low ones is a gain.
    if (repairing && step !== "rejected") incumbent.offer(solution);
    fewestOut = Math.min(fewestOut, solution.unassigned.size);
  }
  if (solution.unassigned.size <= target) incumbent.offer(solution);
  solution.restore(incumbent.snapshot);
  return end;
}

/**
 * A fleet as costly as the incumbent's is not the cheapest when a used vehicle costs more than an unused one
 * that could take its place: on realistic days a refrigerated van (fixed cost 2) can carry plain visits while a
 * plain van (1) stands idle. The annealing cannot get there (emptying the costly route one visit at a time never
 * lowers the fixed cost until the last one goes, and every step in between costs a vehicle more), and
 * `minimiseFleet` only tries smaller fleets. So: empty the costliest such route, open the cheapest unused vehicle
 * with one of its visits, and repair as `minimiseFleet` does without opening others; a complete plan is the new
 * incumbent (a vehicle weight cheaper). A route that cannot be emptied within the patience waits for the next round.
 */
export function cheapenFleet(
  solution: Solution,
  ruinRecreate: RuinRecreate,
  budget: Budget,
  until: number,
  incumbent: Incumbent,
  random: Random,
  penalised?: PenalisedRepair,
  /** Vehicles whose routes a try failed to empty (kept across calls; cleared once a cheaper fleet is found). */
  failed = new Uint8Array(solution.instance.vehicleCount),
): void {
  const { instance } = solution;
  const patience = CHEAPEN_PATIENCE * stagnationLimit(instance.routable.length);
  const repair = new Repair(solution, ruinRecreate, random, penalised);
  const target = incumbent.unassigned;
  let swap: Swap | undefined;
  let rounds = 0;
  let lastGain = budget.iterations;
  let emptiedAt = budget.iterations;
  const end = Math.min(until, budget.phaseProgress() + CHEAPEN_SHARE);
  /** The costly route waits for the next round; back to the incumbent. */
  const giveUp = (costly: number): void => {
    failed[costly] = 1;
    solution.restore(incumbent.snapshot);
    swap = undefined;
  };
  while (budget.phaseProgress() < end) {
    if (solution.unassigned.size <= target) {
      if (swap) {
        // Complete again: the new incumbent, unless (with priorities) as many visits out weigh more.
        if (incumbent.offer(solution)) failed.fill(0);
        else giveUp(swap.costly);
      }
      swap = swapForCheaper(solution, ruinRecreate, random, failed);
      if (!swap && ++rounds < CHEAPEN_ROUNDS && failed.some((f) => f === 1)) {
        failed.fill(0);
        swap = swapForCheaper(solution, ruinRecreate, random, failed);
      }
      if (!swap) break;
      if (!swap.opened) {
        // No visit of the route fits the cheaper vehicle alone.
        giveUp(swap.costly);
        continue;
      }
      emptiedAt = lastGain = budget.iterations;
      repair.restart();
    } else if (swap && (budget.iterations - lastGain >= patience || budget.iterations - emptiedAt >= 2 * patience)) {
      giveUp(swap.costly);
      continue;
    }
    if (repair.step(budget) === "fewer") lastGain = budget.iterations;
  }
  if (swap && solution.unassigned.size <= target) {
    if (incumbent.offer(solution)) failed.fill(0);
  } else if (swap) {
    // Cut short (its share, or `until`): the next call starts with the other costly routes.
    failed[swap.costly] = 1;
  }
  solution.restore(incumbent.snapshot);
}

/**
 * The cheaper-fleet step's patience, as a multiple of the fleet phase's, and how often each costly route is tried
 * (in rounds over the routes): the pair that reached the cheaper fleet most often (README, "A cheaper fleet of the same size").
 */
const CHEAPEN_PATIENCE = 2;
const CHEAPEN_ROUNDS = 2;
/**
 * At most this share of the schedule (horizon or budget) goes to the step: where its tries fail they only cost,
 * and uncapped they can take more than a 15 CPU-s budget at 300 visits (README, "A cheaper fleet of the same size").
 */
const CHEAPEN_SHARE = 0.2;

/** Whether an idle vehicle costs less than the vehicle of some used route (what `cheapenFleet` looks for). */
export function mayCheapen(solution: Solution): boolean {
  const { instance, routes } = solution;
  let idle = Infinity;
  let used = -Infinity;
  for (const route of routes) {
    const fixedCost = instance.fixedCost[route.vehicle]!;
    if (route.visitCount === 0) idle = Math.min(idle, fixedCost);
    else used = Math.max(used, fixedCost);
  }
  return idle < used;
}

interface Swap {
  /** The vehicle whose route was emptied. */
  costly: number;
  /** Whether one of its visits opened the cheaper vehicle (if not, the caller restores the plan). */
  opened: boolean;
}

/**
 * Empties the used route of the highest fixed cost (not `failed`) that the cheapest unused vehicle undercuts,
 * and opens that vehicle with one of the route's visits that fits it alone; undefined when there is no such
 * route. The visits left out are the route's others.
 */
function swapForCheaper(solution: Solution, ruinRecreate: RuinRecreate, random: Random, failed: Uint8Array): Swap | undefined {
  const { instance, routes } = solution;
  const fixedCostOf = (r: number) => instance.fixedCost[routes[r]!.vehicle]!;
  let cheapest = -1;
  for (let r = 0; r < routes.length; r++) {
    if (routes[r]!.visitCount === 0 && (cheapest < 0 || fixedCostOf(r) < fixedCostOf(cheapest))) cheapest = r;
  }
  if (cheapest < 0) return undefined;
  let costly = -1;
  let costlyScore = -Infinity;
  for (let r = 0; r < routes.length; r++) {
    const route = routes[r]!;
    const fixedCost = fixedCostOf(r);
    if (route.visitCount === 0 || failed[route.vehicle] || fixedCost <= fixedCostOf(cheapest)) continue;
    const score = fixedCost + random.next() / (1 + route.visitCount);
    if (score > costlyScore) {
      costly = r;
      costlyScore = score;
    }
  }
  if (costly < 0) return undefined;
  const vehicle = routes[costly]!.vehicle;
  const visits = random.shuffle(routes[costly]!.nodes.filter((node) => node < instance.visitCount));
  for (const v of visits) solution.remove(v);
  // Paired visits move as pairs: a single visit opens the vehicle.
  const opened = visits.some((v) => (!instance.hasPairs || instance.partner[v]! < 0) && ruinRecreate.openWith(v, cheapest));
  return { costly: vehicle, opened };
}

/**
 * A second chance for a repair step whose feasible recreate left visits out: it may put them in at penalised
 * cost, improve and repair (solver.ts, the penalised step used in the fleet phases only), as long as every route
 * ends feasible and no vehicle is opened. `removed`: the visits the step's ruin took out.
 */
export type PenalisedRepair = (removed: readonly number[]) => void;

/**
 * A repair that has gone this share of the fleet phase's patience (`stagnationLimit`) without a visit fewer left
 * out starts trying, every `EJECTION_SPACING` of the patience, an ejection step instead of a ruin: the visit left
 * out most often goes in where the visits it displaces (at most `EJECTION_MAX`) have been left out least often.
 * Ruins around a visit that fits nowhere make room near it in space, often at the wrong time of day, and on a day
 * where the last visit out needs one visit moved at the right time (day 10 of the realistic set, "Round nine")
 * a run could stall there for its whole patience. 100 visits: after 200 steps, every 50th, ~2 ms per try; tried
 * twice as often and from 100 steps, it lost more fleets than it won against this setting (7 to 12 of 48 runs).
 * A try visits at most `EJECTION_NODES` search-tree nodes (~130 ns each): on 100- and 300-visit days the first
 * set that works is met within 1,800 and a try visits at most ~70,000, but where no set of 3 works an uncapped try
 * costs ~n³/6 nodes per position on a route of n visits (a second per try on routes of 100).
 */
const EJECTION_AFTER = 0.1;
const EJECTION_SPACING = 0.025;
const EJECTION_MAX = 3;
const EJECTION_NODES = 50_000;

/**
 * The repair step of both phases: make room next to a visit left out and put back what fits, without opening
 * vehicles; kept when fewer visits are left out or when the ones left out have been absent less often (absence
 * counters steer the search to hard visits), and never when it emptied a route. A stalled repair also ejects
 * (`EJECTION_AFTER`).
 */
export class Repair {
  private readonly absence: Float64Array;
  private absent: number;
  private absenceSum = 0;
  /** Routes in use when the repair (re)started: a step that empties one of them is never kept. */
  private fleet: number;
  /** Steps since the last that left a visit fewer out (or since the route was emptied). */
  private stalled = 0;
  private readonly ejectionAfter: number;
  private readonly ejectionSpacing: number;
  /** Route minimisation's ejection search; with pairs (which it does not move whole) none. Built on first use. */
  private ejection: RouteMinimiser | undefined;
  /** Ejection steps tried so far (for tests and tuning). */
  ejectionTries = 0;

  constructor(
    private readonly solution: Solution,
    private readonly ruinRecreate: RuinRecreate,
    private readonly random: Random,
    private readonly penalised?: PenalisedRepair,
  ) {
    this.absence = new Float64Array(solution.instance.visitCount);
    this.absent = solution.unassigned.size;
    this.fleet = solution.vehiclesUsed;
    const patience = stagnationLimit(solution.instance.routable.length);
    this.ejectionAfter = Math.round(EJECTION_AFTER * patience);
    this.ejectionSpacing = Math.max(1, Math.round(EJECTION_SPACING * patience));
  }

  /** After a route was emptied: the visits left out now are the count to beat. */
  restart(): void {
    this.fleet = this.solution.vehiclesUsed;
    this.absent = this.solution.unassigned.size;
    this.absenceSum = sumOver(this.absence, this.solution.unassigned);
    this.stalled = 0;
  }

  /** One step; "fewer" when it was kept with fewer visits left out. */
  step(budget: Budget): "fewer" | "kept" | "rejected" {
    const { solution, ruinRecreate, random, absence } = this;
    solution.begin();
    const ejecting = this.stalled >= this.ejectionAfter && (this.stalled - this.ejectionAfter) % this.ejectionSpacing === 0;
    const removed = ejecting && this.ejectHardest() ? [] : ruinRecreate.ruin(pick(solution.unassigned, random));
    ruinRecreate.recreate([...solution.unassigned], false, random.next() < 0.5 ? absence : undefined);
    if (this.penalised && solution.unassigned.size > 0) this.penalised(removed);
    budget.iterations++;
    const newAbsenceSum = sumOver(absence, solution.unassigned);
    // The recreate opens no vehicle, so a route the ruin emptied stays empty: in cheapenFleet that is the cheaper
    // van just opened with one visit, and a repair that kept such a step went on without it, never to finish
    // (README, "Round ten").
    const fleetKept = solution.vehiclesUsed >= this.fleet;
    const fewer = fleetKept && solution.unassigned.size < this.absent;
    const kept = fewer || (fleetKept && newAbsenceSum < this.absenceSum);
    this.stalled = fewer ? 0 : this.stalled + 1;
    if (kept) {
      solution.commit();
      this.absent = solution.unassigned.size;
      this.absenceSum = newAbsenceSum;
    } else {
      solution.rollback();
    }
    for (const v of solution.unassigned) absence[v] = absence[v]! + 1;
    this.absenceSum = sumOver(absence, solution.unassigned);
    return fewer ? "fewer" : kept ? "kept" : "rejected";
  }

  /**
   * Puts the visit left out most often into a used route, ejecting at most `EJECTION_MAX` of that route's visits,
   * those left out least often (the lowest sum of absence counters + 1, so fewer ejections win a tie), so that the
   * route stays feasible; the ejected visits are left out. False, and the plan unchanged, when no place works.
   */
  ejectHardest(): boolean {
    const { solution, absence } = this;
    if (solution.instance.hasPairs) return false;
    let hardest = -1;
    for (const v of solution.unassigned) if (hardest < 0 || absence[v]! > absence[hardest]!) hardest = v;
    if (hardest < 0) return false;
    this.ejectionTries++;
    this.ejection ??= new RouteMinimiser(solution, this.random, {
      ...ROUTE_MINIMISATION_PARAMETERS,
      maxEjected: EJECTION_MAX,
      maxSearchNodes: EJECTION_NODES,
    });
    const { penalty } = this.ejection;
    for (let v = 0; v < absence.length; v++) penalty[v] = absence[v]! + 1;
    return this.ejection.insertEjecting(hardest) !== undefined;
  }
}

/**
 * An emptied route may go `stagnationLimit` iterations without a visit fewer left out (or twice that in
 * all) before another route is tried: one route's visits that fit nowhere else (say, tagged visits and a
 * time window only its vehicle reaches) would otherwise hold the whole fleet phase. After `ROUTE_TRIES`
 * routes failed at one fleet size the phase ends: its length then depends on the iterations, not on the
 * budget, so a run stopped early and one spending a longer budget reach the same fleet (same seed, when
 * neither reaches its share of the budget first), and the time left goes to distance.
 */
const ROUTE_TRIES = 3;

/**
 * Two routes given up in a row at one fleet size, each while this share of its visits (of those another used
 * vehicle may serve) was still out at its best, end the phase: the smaller fleet lacks room, not the right route to
 * empty; one such route alone is not enough (README, "Constants and their measurements").
 */
const OUT_OF_REACH = 0.4;

/**
 * A route given up while at least `OUT_OF_REACH` of its movable visits were still out at its best (`leftOut`: the
 * fewest visits left out at once since it was emptied, beyond those left out before). "Movable" counts a visit another used
 * vehicle may serve by its tags; whether that vehicle's shift or windows can reach it is not checked, so a route of
 * visits only its own vehicle reaches in time counts as lacking room — hence two such routes in a row, not one.
 */
function lacksRoom(route: EmptiedRoute, leftOut: number): boolean {
  return leftOut - (route.visits - route.movable) >= OUT_OF_REACH * route.movable;
}

interface EmptiedRoute {
  vehicle: number;
  /** Visits it served, and how many of them another used vehicle may serve (tags). */
  visits: number;
  movable: number;
}

/**
 * Empties the route whose removal saves the most fixed cost per visit to re-insert (`byVisits`: the
 * route with the fewest visits, after a costlier one failed), of the vehicles not `failed`; returns its vehicle
 * and visit counts. Routes of vehicles with no fixed cost save nothing: undefined when only such routes (or failed
 * ones) are left.
 */
function emptyARoute(solution: Solution, random: Random, failed: Uint8Array, byVisits = false): EmptiedRoute | undefined {
  const { instance, routes } = solution;
  let chosen = -1;
  let chosenScore = Infinity;
  for (let r = 0; r < routes.length; r++) {
    const route = routes[r]!;
    const fixedCost = instance.fixedCost[route.vehicle]!;
    if (route.visitCount === 0 || fixedCost <= 0 || failed[route.vehicle]) continue;
    const score = (route.visitCount + random.next()) / (byVisits ? 1 : fixedCost);
    if (score < chosenScore) {
      chosen = r;
      chosenScore = score;
    }
  }
  if (chosen < 0) return undefined;
  const vehicle = routes[chosen]!.vehicle;
  const visits = routes[chosen]!.nodes.filter((node) => node < instance.visitCount);
  for (const v of visits) solution.remove(v);
  return { vehicle, visits: visits.length, movable: movableCount(solution, visits) };
}

/** Visits another used vehicle may serve (by tags), once their own route is empty. */
function movableCount(solution: Solution, visits: number[]): number {
  const { instance, routes } = solution;
  return visits.filter((v) =>
    routes.some((route) => route.visitCount > 0 && instance.compatible[v * instance.vehicleCount + route.vehicle] === 1),
  ).length;
}

function pick(visits: Set<number>, random: Random): number | undefined {
  let index = random.int(visits.size);
  for (const v of visits) if (index-- === 0) return v;
  return undefined;
}

function sumOver(values: Float64Array, visits: Iterable<number>): number {
  let sum = 0;
  for (const v of visits) sum += values[v]!;
  return sum;
}
