// Penalised infeasibility for the ruin-and-recreate step (PyVRP/HGS style): the removed visits go back at
// their cheapest *penalised* place — distance and the objective's other terms plus λ_tw × time warp (and
// duration excess), λ_load × load excess and λ_dist × distance excess — so a step may pass through plans
// that break time windows or capacities; a granular local search on the visits the step touched then
// works under the same penalised cost (relocate of 1–3 visits, swap, 2-opt* — across breaks and vehicle
// classes too, where the moved visits may ride on the other vehicle, in O(1) from per-route tail summaries), and
// whatever is still infeasible is repaired by taking visits out of the infeasible routes and re-inserting them
// feasibly. The annealing
// therefore still compares feasible plans only. The penalties adapt to a target share of steps whose local
// search ends feasible on its own (HGS-CVRP's rule). maxVisits, compatibility and pairs stay hard; with
// pickup-and-delivery pairs the step is not used (the caller keeps the feasible recreate).
import { Blinks, type Random } from "./random.ts";
import type { RuinRecreate } from "./ruin-recreate.ts";
import { EPSILON, type Route, Segment } from "./route-state.ts";
import type { AnnealOptions } from "./search.ts";
import type { Solution } from "./solution.ts";

/** Neighbours per visit the local search tries (granular). */
const NEIGHBOURS_TRIED = 20;
/** Share of steps whose local search should end feasible, and how the penalties move towards it. */
const FEASIBLE_TARGET = 0.8;
const ADAPT_EVERY = 100;
const RAISE = 1.2;
const LOWER = 0.85;
const IMPROVEMENT = 1e-9;
const MAX_PASSES = 8;

/**
 * The annealing's hooks for acceptance on penalised cost (`anneal`'s `recreate` and `penalised`): every removed
 * visit back at its penalised place (an idle vehicle, at its fixed cost, is one of the places: otherwise a plan
 * squeezed into fewer routes could never get feasible again), the local search on steps whose penalised cost comes
 * within `nearAccepted` of the acceptance threshold, no repair; the annealing repairs a plan only when it beats the
 * best on penalised cost.
 */
export function acceptOnPenalisedCost(
  solution: Solution,
  ruinRecreate: RuinRecreate,
  step: PenalisedStep,
  nearAccepted: number,
): Pick<AnnealOptions, "recreate" | "penalised"> {
  return {
    recreate: (removed, acceptance) => {
      step.insertAll(ruinRecreate.order([...solution.unassigned]), true);
      if (solution.unassigned.size > 0) ruinRecreate.recreate([...solution.unassigned], true);
      if (solution.droppedWeight > acceptance.dropped || solution.cost + step.totalPenalty() > acceptance.cost * nearAccepted) return;
      step.insertAndImprove([], removed, false);
    },
    penalised: {
      penalty: () => step.totalPenalty(),
      repair: () => {
        if (step.repair().length > 0) ruinRecreate.recreate([...solution.unassigned], true);
      },
    },
  };
}

/** The penalty weights, adapted to the share of feasible steps. */
export class Penalties {
  /** Per minute of time warp or duration excess. */
  timeWarp: number;
  /** Per unit of load above capacity, any dimension. */
  load: number;
  /** Per distance unit above a vehicle's maximum. */
  distance = 10;
  /** Changes whenever a weight does: a move evaluated under other weights may have another delta now. */
  epoch = 0;
  private feasible = 0;
  private registered = 0;
  private readonly floor: { timeWarp: number; load: number };

  /** `scale`: the first solution's mean distance per visit; `demandScale`: the mean demand per visit. */
  constructor(scale: number, demandScale: number) {
    this.timeWarp = scale;
    this.load = scale / Math.max(demandScale, EPSILON);
    this.floor = { timeWarp: this.timeWarp, load: this.load };
  }

  register(feasible: boolean): void {
    if (feasible) this.feasible++;
    if (++this.registered < ADAPT_EVERY) return;
    const share = this.feasible / this.registered;
    const factor = share < FEASIBLE_TARGET - 0.05 ? RAISE : share > FEASIBLE_TARGET + 0.05 ? LOWER : 1;
    const timeWarp = Math.max(this.floor.timeWarp, this.timeWarp * factor);
    const load = Math.max(this.floor.load, this.load * factor);
    if (timeWarp !== this.timeWarp || load !== this.load) this.epoch++;
    this.timeWarp = timeWarp;
    this.load = load;
    this.feasible = 0;
    this.registered = 0;
  }
}

export class PenalisedStep {
  private readonly segment: Segment;
  private readonly other: Segment;
  private readonly loadA: Float64Array;
  private readonly loadB: Float64Array;
  private readonly blinks: Blinks;
  private readonly promising = new Set<number>();
  private readonly order: number[] = [];
  /**
   * Per visit u and neighbour rank k: the versions of u's and the neighbour's routes and the penalty epoch when no
   * move between them improved. Each move's delta depends on those two routes and the weights only, and a
   * rejected step brings its routes back at their old versions, so the pair would fail again.
   */
  private readonly failed: Int32Array;
  private readonly tried: number;
  private readonly tails: TailSummaries;
  /** Per vehicle class, the last `insertPenalised` call that tried one of its idle vehicles. */
  private readonly idleTried: Int32Array;
  private idleCall = 0;

  constructor(
    private readonly solution: Solution,
    readonly penalties: Penalties,
    random: Random,
    /** Whether unchanged neighbour pairs are skipped (`failed`); false only to show, in tests, that it changes nothing. */
    private readonly remember = true,
    /**
     * Whether insertions and relocates are pruned by the penalties that cannot fall (load and distance excess:
     * `loadExcessRise`, `distanceExcessRise`); false only to show, in tests, that it changes nothing.
     */
    private readonly bound = true,
  ) {
    const { instance, windows } = solution;
    this.segment = new Segment(instance, windows);
    this.other = new Segment(instance, windows);
    this.loadA = new Float64Array(instance.dims);
    this.loadB = new Float64Array(instance.dims);
    this.blinks = new Blinks(random, 0.01);
    this.tried = Math.min(NEIGHBOURS_TRIED, instance.neighbourCount);
    this.tails = new TailSummaries(solution);
    let classes = 0;
    for (let k = 0; k < instance.vehicleCount; k++) classes = Math.max(classes, instance.vehicleClass[k]! + 1);
    this.idleTried = new Int32Array(classes);
    // Version 0 is never a route's: nothing is marked failed at first.
    this.failed = new Int32Array(instance.visitCount * this.tried * 3);
  }

  /**
   * Neighbour pairs the local search evaluated and skipped as unchanged since they last failed, and insertion or
   * relocate positions pruned by the excess bound alone (for tests).
   */
  readonly counts = { evaluated: 0, skipped: 0, pruned: 0 };

  /**
   * Puts the visits (as ordered by the caller) back at their cheapest penalised places in used routes; those
   * no used route may take stay out for the feasible recreate. Then the local search on the visits touched, and
   * the repair; returns the visits the repair took out (the caller re-inserts them feasibly) and whether the
   * local search ended feasible on its own.
   */
  insertAndImprove(
    visits: readonly number[],
    touched: readonly number[] = [],
    /** False: infeasible routes stay as they are (acceptance on penalised cost repairs only new bests: `repair`). */
    repairInfeasible = true,
  ): { out: number[]; feasible: boolean } {
    const { solution } = this;
    this.promising.clear();
    for (const v of touched) this.promising.add(v);
    for (const v of visits) {
      this.promising.add(v);
      if (solution.routeOf[v]! >= 0) continue;
      this.insertPenalised(v);
    }
    this.improve();
    const feasible = solution.routes.every((route) => route.visitCount === 0 || this.penaltyOf(route) <= EPSILON);
    this.penalties.register(feasible);
    return { out: feasible || !repairInfeasible ? [] : this.repair(), feasible };
  }

  /** Puts each visit (in this order) at its cheapest penalised place in a used route; those none may take stay out. */
  insertAll(visits: readonly number[], open = false): void {
    for (const v of visits) if (this.solution.routeOf[v]! < 0) this.insertPenalised(v, open);
  }

  /** Σ penalties of the used routes: 0 when the plan is feasible (time windows, shifts, capacities, limits). */
  totalPenalty(): number {
    let total = 0;
    for (const route of this.solution.routes) if (route.visitCount > 0) total += this.penaltyOf(route);
    return total;
  }

  /** Penalty of a whole route as it is. */
  penaltyOf(route: Route): number {
    const last = route.nodes.length - 1;
    return this.penalty(route, route.fTimeWarp[last]!, route.fDuration[last]!, route.fDistance[last]!, route.load);
  }

  private penalty(route: Route, timeWarp: number, duration: number, distance: number, load: Float64Array): number {
    const { instance } = this.solution;
    const { dims, capacity } = instance;
    const k = route.vehicle;
    const { penalties } = this;
    let excess = 0;
    for (let d = 0; d < dims; d++) excess += Math.max(0, load[d]! - capacity[k * dims + d]!);
    return (
      penalties.timeWarp * (timeWarp + Math.max(0, duration - instance.maxDuration[k]!)) +
      penalties.distance * Math.max(0, distance - instance.maxDistance[k]!) +
      penalties.load * excess
    );
  }

  /** Penalised cost of `route`'s vehicle driving the segment with this load and visit count (0 visits: unused). */
  private costOf(route: Route, segment: Segment, load: Float64Array, visits: number): number {
    if (visits === 0) return 0;
    return (
      route.costOf(segment.distance, this.underload(route, load)) +
      this.penalty(route, segment.timeWarp, segment.duration, segment.distance, load)
    );
  }

  private current(route: Route): number {
    return route.visitCount === 0 ? 0 : route.cost + this.penaltyOf(route);
  }

  private underload(route: Route, load: Float64Array): number {
    const { dims, minCapacity } = this.solution.instance;
    let short = 0;
    for (let d = 0; d < dims; d++) short += Math.max(0, minCapacity[route.vehicle * dims + d]! - load[d]!);
    return short;
  }

  /** Cheapest penalised insertion of v into a used route of a compatible vehicle; whether it was inserted. */
  private insertPenalised(v: number, open = false): boolean {
    const { solution } = this;
    const { instance, routes } = solution;
    const { dims, demand, windowOffset, windowOpen, windowClose } = instance;
    const load = this.loadA;
    let best = Infinity;
    let bestRoute = -1;
    let bestPosition = 0;
    let bestWindow = 0;
    // `open`: one idle vehicle per class is tried too (its fixed cost weighs in through the route's cost).
    const call = ++this.idleCall;
    for (let r = 0; r < routes.length; r++) {
      const route = routes[r]!;
      if (route.visitCount === 0) {
        const vehicleClass = instance.vehicleClass[route.vehicle]!;
        if (!open || this.idleTried[vehicleClass] === call) continue;
        this.idleTried[vehicleClass] = call;
      }
      if (route.visitCount + 1 > instance.maxVisits[route.vehicle]!) continue;
      if (instance.compatible[v * instance.vehicleCount + route.vehicle] !== 1) continue;
      for (let d = 0; d < dims; d++) load[d] = route.load[d]! + demand[v * dims + d]!;
      const before = this.current(route);
      const last = route.nodes.length - 1;
      // Inserting adds no less than its detour (time warp and load excess only grow): a lower bound to prune by.
      const fixed = route.costOf(route.visitCount > 0 ? route.distance : route.fDistance[last]!, route.underloadWith(v)) - route.cost;
      // In a used route the load excess grows by a known amount, the distance excess by the detour's share, and
      // the time part of the penalty falls by at most all of it.
      const used = this.bound && route.visitCount > 0;
      const rise = used ? this.loadExcessRise(route, load) - this.timePenalty(route) : 0;
      const at = instance.location[v]!;
      for (let p = 0; p < last; p++) {
        const detour = this.detour(route.fLast[p]!, at, at, route.nextLocation[p]!);
        if (fixed + detour >= best) continue;
        if (used && fixed + detour + rise + this.distanceExcessRise(route, detour) >= best) {
          // Its blink is drawn all the same: the random numbers stay those of the unpruned scan.
          this.blinks.skip();
          this.counts.pruned++;
          continue;
        }
        if (this.blinks.skip()) continue;
        for (let w = windowOffset[v]!; w < windowOffset[v + 1]!; w++) {
          this.segment
            .setPrefix(route, p)
            .appendNode(v, windowOpen[w]!, windowClose[w]!)
            .appendSuffix(route, p + 1);
          const cost = this.costOf(route, this.segment, load, route.visitCount + 1) - before;
          if (cost < best) {
            best = cost;
            bestRoute = r;
            bestPosition = p + 1;
            bestWindow = w;
          }
        }
      }
    }
    if (bestRoute < 0) return false;
    solution.insert(v, bestRoute, bestPosition, bestWindow);
    return true;
  }

  /**
   * What the load-excess penalty of a used route rises by when its load becomes `load` (≥ 0: demands are not
   * negative). Less `timePenalty` and plus `distanceExcessRise`, a lower bound on what a move into the route adds
   * to its penalty with no premise: time warp and duration excess can fall under an insertion (a route with
   * breaks and warp can trade warp for duration: seen on random-problem.ts days), but not below 0.
   */
  private loadExcessRise(route: Route, load: Float64Array): number {
    const { dims, capacity } = this.solution.instance;
    const k = route.vehicle;
    let rise = 0;
    for (let d = 0; d < dims; d++) {
      const cap = capacity[k * dims + d]!;
      rise += Math.max(0, load[d]! - cap) - Math.max(0, route.load[d]! - cap);
    }
    return this.penalties.load * rise;
  }

  /** The time part of a route's penalty: time warp and duration excess. */
  private timePenalty(route: Route): number {
    const last = route.nodes.length - 1;
    const excess = Math.max(0, route.fDuration[last]! - this.solution.instance.maxDuration[route.vehicle]!);
    return this.penalties.timeWarp * (route.fTimeWarp[last]! + excess);
  }

  /** What the distance-excess penalty of a used route rises by when it drives `detour` more. */
  private distanceExcessRise(route: Route, detour: number): number {
    const limit = this.solution.instance.maxDistance[route.vehicle]!;
    if (limit === Infinity) return 0;
    const distance = route.distance;
    return this.penalties.distance * (Math.max(0, distance + detour - limit) - Math.max(0, distance - limit));
  }

  /** Distance added by driving prev → first … last → next instead of prev → next (locations). */
  private detour(prev: number, first: number, last: number, next: number): number {
    const { distance, locationCount } = this.solution.instance;
    return distance[prev * locationCount + first]! + distance[last * locationCount + next]! - distance[prev * locationCount + next]!;
  }

  private leg(from: number, to: number): number {
    const { distance, locationCount } = this.solution.instance;
    return distance[from * locationCount + to]!;
  }

  /** No penalty and no underload: a move between two such routes gains at most what it saves in distance. */
  private clean(route: Route): boolean {
    return route.underload === 0 && this.penaltyOf(route) <= EPSILON;
  }

  /** Granular local search under penalised cost on the promising visits, first improvement, a few passes. */
  private improve(): void {
    const { solution } = this;
    const { instance, routeOf, version } = solution;
    const { tried, failed, counts } = this;
    const epoch = this.penalties.epoch;
    for (let pass = 0, improved = true; improved && pass < MAX_PASSES; pass++) {
      improved = false;
      this.order.length = 0;
      for (const u of this.promising) this.order.push(u);
      for (const u of this.order) {
        if (routeOf[u]! < 0) continue;
        for (let k = 0; k < tried; k++) {
          const v = instance.neighbours[u * instance.neighbourCount + k]!;
          if (routeOf[v]! < 0 || routeOf[v] === routeOf[u]) continue;
          const cell = (u * tried + k) * 3;
          const versionU = version[routeOf[u]!]!;
          const versionV = version[routeOf[v]!]!;
          if (this.remember && failed[cell] === versionU && failed[cell + 1] === versionV && failed[cell + 2] === epoch) {
            counts.skipped++;
            continue;
          }
          counts.evaluated++;
          if (this.tryRelocate(u, v) || this.trySwap(u, v) || this.tryTwoOptStar(u, v) || this.tryTwoOptStar(v, u)) {
            this.promising.add(v);
            improved = true;
            break;
          }
          failed[cell] = versionU;
          failed[cell + 1] = versionV;
          failed[cell + 2] = epoch;
        }
      }
    }
  }

  /** Moves u and up to two visits after it (no break among them) before or after v, in v's route. */
  private tryRelocate(u: number, v: number): boolean {
    const { solution } = this;
    const { instance } = solution;
    const { dims, demand } = instance;
    const from = solution.routes[solution.routeOf[u]!]!;
    const to = solution.routes[solution.routeOf[v]!]!;
    const i = solution.positionOf[u]!;
    const before = this.current(from) + this.current(to);
    const bothClean = this.clean(from) && this.clean(to);
    const { location } = instance;
    for (let length = 1; length <= 3; length++) {
      const lastMoved = from.nodes[i + length - 1]!;
      if (i + length - 1 >= from.nodes.length - 1 || lastMoved >= instance.visitCount) return false;
      if (instance.compatible[lastMoved * instance.vehicleCount + to.vehicle] !== 1) return false;
      if (to.visitCount + length > instance.maxVisits[to.vehicle]!) return false;
      for (let d = 0; d < dims; d++) {
        let moved = 0;
        for (let m = 0; m < length; m++) moved += demand[from.nodes[i + m]! * dims + d]!;
        this.loadA[d] = from.load[d]! - moved;
        this.loadB[d] = to.load[d]! + moved;
      }
      let fromCost = Number.NaN;
      const first = location[u]!;
      const lastLocation = location[lastMoved]!;
      const saved =
        bothClean && from.visitCount > length
          ? this.detour(from.fLast[i - 1]!, first, lastLocation, from.nextLocation[i + length - 1]!)
          : Infinity;
      // What `to`'s cost rises by at least, besides the detour: its underload and load excess, less its time penalty.
      let toFixed = Number.NaN;
      for (let after = 0; after < 2; after++) {
        const p = solution.positionOf[v]! + after;
        const detour = this.detour(to.fLast[p - 1]!, first, lastLocation, to.nextLocation[p - 1]!);
        if (detour - saved >= -IMPROVEMENT) continue;
        if (Number.isNaN(fromCost)) {
          this.segment.setPrefix(from, i - 1).appendSuffix(from, i + length);
          fromCost = this.costOf(from, this.segment, this.loadA, from.visitCount - length);
        }
        if (this.bound) {
          // `from`'s side is known exactly; `to`'s rises by no less than this (`loadExcessRise`).
          if (Number.isNaN(toFixed)) {
            toFixed =
              to.costOf(to.distance, this.underload(to, this.loadB)) - to.cost + this.loadExcessRise(to, this.loadB) - this.timePenalty(to);
          }
          const lower = fromCost - this.current(from) + toFixed + detour + this.distanceExcessRise(to, detour);
          if (lower >= -IMPROVEMENT) {
            this.counts.pruned++;
            continue;
          }
        }
        this.other.setPrefix(to, p - 1);
        for (let m = 0; m < length; m++) this.other.append(from.nodes[i + m]!);
        this.other.appendSuffix(to, p);
        const delta = fromCost + this.costOf(to, this.other, this.loadB, to.visitCount + length) - before;
        if (delta < -IMPROVEMENT) {
          const moved = from.nodes.slice(i, i + length);
          const ra = solution.routeOf[u]!;
          const rb = solution.routeOf[v]!;
          const newFrom = [...from.nodes.slice(0, i), ...from.nodes.slice(i + length)];
          const newTo = [...to.nodes.slice(0, p), ...moved, ...to.nodes.slice(p)];
          solution.replaceNodes(ra, newFrom);
          solution.replaceNodes(rb, newTo);
          return true;
        }
      }
    }
    return false;
  }

  private trySwap(u: number, v: number): boolean {
    const { solution } = this;
    const { instance } = solution;
    const ra = solution.routeOf[u]!;
    const rb = solution.routeOf[v]!;
    const a = solution.routes[ra]!;
    const b = solution.routes[rb]!;
    if (!instance.compatible[u * instance.vehicleCount + b.vehicle] || !instance.compatible[v * instance.vehicleCount + a.vehicle])
      return false;
    const i = solution.positionOf[u]!;
    const j = solution.positionOf[v]!;
    if (this.clean(a) && this.clean(b)) {
      const lu = instance.location[u]!;
      const lv = instance.location[v]!;
      const pa = a.fLast[i - 1]!;
      const na = a.nextLocation[i]!;
      const pb = b.fLast[j - 1]!;
      const nb = b.nextLocation[j]!;
      const delta =
        this.leg(pa, lv) +
        this.leg(lv, na) -
        this.leg(pa, lu) -
        this.leg(lu, na) +
        this.leg(pb, lu) +
        this.leg(lu, nb) -
        this.leg(pb, lv) -
        this.leg(lv, nb);
      if (delta >= -IMPROVEMENT) return false;
    }
    const costA = this.replaced(a, i, v, u, this.segment, this.loadA);
    const costB = this.replaced(b, j, u, v, this.other, this.loadB);
    if (costA + costB - this.current(a) - this.current(b) >= -IMPROVEMENT) return false;
    const newA = [...a.nodes];
    const newB = [...b.nodes];
    newA[i] = v;
    newB[j] = u;
    solution.replaceNodes(ra, newA);
    solution.replaceNodes(rb, newB);
    return true;
  }

  private replaced(route: Route, p: number, by: number, out: number, segment: Segment, load: Float64Array): number {
    const { dims, demand } = this.solution.instance;
    for (let d = 0; d < dims; d++) load[d] = route.load[d]! - demand[out * dims + d]! + demand[by * dims + d]!;
    segment
      .setPrefix(route, p - 1)
      .append(by)
      .appendSuffix(route, p + 1);
    return this.costOf(route, segment, load, route.visitCount);
  }

  /**
   * 2-opt*: u's route keeps its head up to u and drives v's route's visits from v on; v's route keeps its head
   * before v and drives the visits after u. Breaks stay with their vehicle: one that was in the part handed
   * over is taken at the join. Between vehicles of one class with no break handed over this is O(1) from the
   * routes' own summaries; otherwise from `TailSummaries` (the tails driven with the other vehicle's travel times
   * to its end), also O(1) once a route version is summarised (every moved visit must be compatible).
   */
  private tryTwoOptStar(u: number, v: number): boolean {
    const { solution } = this;
    const { instance } = solution;
    const ra = solution.routeOf[u]!;
    const rb = solution.routeOf[v]!;
    const a = solution.routes[ra]!;
    const b = solution.routes[rb]!;
    const i = solution.positionOf[u]!;
    const j = solution.positionOf[v]!;
    if (this.clean(a) && this.clean(b)) {
      // u → v and v's predecessor → u's successor instead (the ends' last legs taken as unchanged).
      const lu = instance.location[u]!;
      const lv = instance.location[v]!;
      const na = a.nextLocation[i]!;
      const pb = b.fLast[j - 1]!;
      if (this.leg(lu, lv) + this.leg(pb, na) - this.leg(lu, na) - this.leg(pb, lv) >= -IMPROVEMENT) return false;
    }
    const { tails } = this;
    const tailA = tails.visitsFrom(ra, a, i + 1);
    const tailB = tails.visitsFrom(rb, b, j);
    const visitsA = a.visitCount - tailA + tailB;
    const visitsB = b.visitCount - tailB + tailA;
    if (visitsA > instance.maxVisits[a.vehicle]! || visitsB > instance.maxVisits[b.vehicle]!) return false;
    const sameClass = instance.vehicleClass[a.vehicle] === instance.vehicleClass[b.vehicle];
    const simple = sameClass && !tails.breakFrom(ra, a, i + 1) && !tails.breakFrom(rb, b, j);
    if (!sameClass && (!tails.tailFits(rb, b, j, a.vehicle) || !tails.tailFits(ra, a, i + 1, b.vehicle))) return false;
    const { dims } = instance;
    for (let d = 0; d < dims; d++) {
      this.loadA[d] = a.fLoad[i * dims + d]! + b.bLoad[j * dims + d]!;
      this.loadB[d] = b.fLoad[(j - 1) * dims + d]! + a.bLoad[(i + 1) * dims + d]!;
    }
    if (simple) {
      this.segment.setPrefix(a, i).appendSuffix(b, j);
      this.other.setPrefix(b, j - 1).appendSuffix(a, i + 1);
    } else {
      tails.join(this.segment, a, ra, i, b, rb, j);
      tails.join(this.other, b, rb, j - 1, a, ra, i + 1);
    }
    const delta =
      this.costOf(a, this.segment, this.loadA, visitsA) +
      this.costOf(b, this.other, this.loadB, visitsB) -
      this.current(a) -
      this.current(b);
    if (delta >= -IMPROVEMENT) return false;
    const newA = this.joinedNodes(a, i, b, j);
    const newB = this.joinedNodes(b, j - 1, a, i + 1);
    solution.replaceNodes(ra, newA);
    solution.replaceNodes(rb, newB);
    return true;
  }

  private joinedNodes(head: Route, i: number, tail: Route, j: number): number[] {
    const { isBreak } = this.solution.instance;
    const nodes = head.nodes.slice(0, i + 1);
    for (let p = i + 1; p < head.nodes.length - 1; p++) if (isBreak[head.nodes[p]!]) nodes.push(head.nodes[p]!);
    for (let p = j; p < tail.nodes.length - 1; p++) if (!isBreak[tail.nodes[p]!]) nodes.push(tail.nodes[p]!);
    nodes.push(head.nodes[head.nodes.length - 1]!);
    return nodes;
  }

  /**
   * Takes visits out of every route that is still infeasible, each time the one whose removal lowers the
   * penalised cost most, until the route is feasible; returns them (now unassigned).
   */
  repair(): number[] {
    const { solution } = this;
    const { instance } = solution;
    const { dims, demand } = instance;
    const out: number[] = [];
    for (const route of solution.routes) {
      while (route.visitCount > 0 && this.penaltyOf(route) > EPSILON) {
        let best = Infinity;
        let bestNode = -1;
        for (let p = 1; p < route.nodes.length - 1; p++) {
          const node = route.nodes[p]!;
          if (node >= instance.visitCount) continue;
          for (let d = 0; d < dims; d++) this.loadA[d] = route.load[d]! - demand[node * dims + d]!;
          this.segment.setPrefix(route, p - 1).appendSuffix(route, p + 1);
          const cost = this.costOf(route, this.segment, this.loadA, route.visitCount - 1);
          if (cost < best) {
            best = cost;
            bestNode = node;
          }
        }
        solution.remove(bestNode);
        out.push(bestNode);
      }
    }
    return out;
  }
}

/**
 * 2-opt* across vehicle classes and breaks in O(1): per route, summaries of "its visits from position j on,
 * breaks left out, driven with a given vehicle's travel times to that vehicle's end" (one set per *end profile*:
 * travel-time matrix, end location and end window), and of "its breaks from position j on" (no location, so no
 * travel), its visits from j on and the vehicle classes all of them may ride on. Computed in O(n) per route and
 * profile when first asked for at a route version (a version comes back only with the same nodes and windows, so
 * a rejected step's routes are still known), instead of O(n) node-by-node concatenation per evaluated move.
 * Exact: Vidal's concatenation is associative, so the result is the node-by-node one up to floating-point
 * rounding (test/unit/routing/two-opt-star.test.ts compares the two on random routes).
 */
export class TailSummaries {
  /** Per vehicle, its end profile. */
  readonly profileOf: Int32Array;
  private readonly profileTime: Float64Array[] = [];
  private readonly profileEnd: number[] = [];
  private readonly profiles: number;
  /** Per route and profile: the route version the summaries are of (0: none yet). */
  private readonly stamp: Int32Array;
  /** Per route: the version the profile-independent summaries (breaks, visits, classes) are of. */
  private readonly baseStamp: Int32Array;
  private readonly perRoute: RouteTails[];
  /** Vehicle classes fit in a 32-bit mask: the class check is O(1); otherwise it scans the tail. */
  private readonly classMasks: boolean;

  constructor(private readonly solution: Solution) {
    const { instance } = solution;
    const { vehicleCount, endNode, location, travelTime } = instance;
    const { open, close } = solution.windows;
    this.profileOf = new Int32Array(vehicleCount);
    const matrices = new Map<Float64Array, number>();
    const keys = new Map<string, number>();
    for (let k = 0; k < vehicleCount; k++) {
      const time = travelTime[k]!;
      if (!matrices.has(time)) matrices.set(time, matrices.size);
      const end = endNode[k]!;
      const key = `${matrices.get(time)} ${location[end]} ${open[end]} ${close[end]} ${instance.service[end]}`;
      let profile = keys.get(key);
      if (profile === undefined) {
        profile = keys.size;
        keys.set(key, profile);
        this.profileTime.push(time);
        this.profileEnd.push(end);
      }
      this.profileOf[k] = profile;
    }
    this.profiles = keys.size;
    const routes = solution.routes.length;
    this.stamp = new Int32Array(routes * this.profiles);
    this.baseStamp = new Int32Array(routes);
    this.perRoute = Array.from({ length: routes }, () => new RouteTails(0, this.profiles));
    let classes = 0;
    for (let k = 0; k < vehicleCount; k++) classes = Math.max(classes, instance.vehicleClass[k]! + 1);
    this.classMasks = classes <= 31;
  }

  /** Visits of route r (as `route`) from position `from` on. */
  visitsFrom(r: number, route: Route, from: number): number {
    return this.base(r, route).visits[from]!;
  }

  /** Whether route r has a break at position `from` or after. */
  breakFrom(r: number, route: Route, from: number): boolean {
    return this.base(r, route).breakAny[from] === 1;
  }

  /** Every visit of route r from `from` on may ride on `vehicle`. */
  tailFits(r: number, route: Route, from: number, vehicle: number): boolean {
    const { instance } = this.solution;
    if (this.classMasks) return ((this.base(r, route).classes[from]! >>> instance.vehicleClass[vehicle]!) & 1) === 1;
    const { visitCount, compatible, vehicleCount } = instance;
    for (let p = from; p < route.nodes.length - 1; p++) {
      const node = route.nodes[p]!;
      if (node < visitCount && compatible[node * vehicleCount + vehicle] !== 1) return false;
    }
    return true;
  }

  /**
   * `segment` := `head`'s nodes 0..i, its breaks after i (taken at the join), route `rt`'s (`tail`'s) visits from j
   * on driven with `head`'s vehicle's travel times, and `head`'s end: what PenalisedStep.joinedNodes builds.
   */
  join(segment: Segment, head: Route, rh: number, i: number, tail: Route, rt: number, j: number): void {
    const { distance, locationCount } = this.solution.instance;
    const headTails = this.base(rh, head);
    segment.setPrefix(head, i);
    if (headTails.breakAny[i + 1] === 1) {
      const p = i + 1;
      segment.join(0, headTails.bkDuration[p]!, headTails.bkTimeWarp[p]!, headTails.bkEarliest[p]!, headTails.bkLatest[p]!);
    }
    const profile = this.profileOf[head.vehicle]!;
    const tails = this.suffixes(rt, tail, profile);
    const at = j * this.profiles + profile;
    const leg = segment.last * locationCount + tails.first[at]!;
    segment.join(this.profileTime[profile]![leg]!, tails.duration[at]!, tails.timeWarp[at]!, tails.earliest[at]!, tails.latest[at]!);
    segment.distance += distance[leg]! + tails.distance[at]!;
    segment.last = head.endLocation;
  }

  private base(r: number, route: Route): RouteTails {
    const { solution } = this;
    const version = solution.version[r]!;
    let tails = this.perRoute[r]!;
    if (this.baseStamp[r] === version) return tails;
    const n = route.nodes.length;
    if (tails.size < n) {
      tails = new RouteTails(Math.max(n, 2 * tails.size), this.profiles);
      this.perRoute[r] = tails;
      for (let p = 0; p < this.profiles; p++) this.stamp[r * this.profiles + p] = 0;
    }
    const { instance } = solution;
    const { isBreak, visitCount, vehicleCount, compatible, vehicleClass, service } = instance;
    const { open, close } = solution.windows;
    // Classes of which some vehicle may take every visit so far (a class's vehicles share tags, capacity and shift).
    let all = 0;
    if (this.classMasks) for (let k = 0; k < vehicleCount; k++) all |= 1 << vehicleClass[k]!;
    tails.visits[n - 1] = 0;
    tails.breakAny[n - 1] = 0;
    tails.classes[n - 1] = all;
    for (let p = n - 2; p >= 0; p--) {
      const node = route.nodes[p]!;
      tails.visits[p] = tails.visits[p + 1]! + (node < visitCount ? 1 : 0);
      let classes = tails.classes[p + 1]!;
      if (this.classMasks && node < visitCount) {
        let mask = 0;
        for (let k = 0; k < vehicleCount; k++) if (compatible[node * vehicleCount + k] === 1) mask |= 1 << vehicleClass[k]!;
        classes &= mask;
      }
      tails.classes[p] = classes;
      if (isBreak[node]) {
        // This break, then the later ones (no travel between breaks).
        let duration = service[node]!;
        let timeWarp = 0;
        let earliest = open[node]!;
        let latest = close[node]!;
        if (tails.breakAny[p + 1] === 1) {
          const delta = duration - timeWarp;
          const extraWait = Math.max(tails.bkEarliest[p + 1]! - delta - latest, 0);
          const extraWarp = Math.max(earliest + delta - tails.bkLatest[p + 1]!, 0);
          earliest = Math.max(tails.bkEarliest[p + 1]! - delta, earliest) - extraWait;
          latest = Math.min(tails.bkLatest[p + 1]! - delta, latest) + extraWarp;
          duration += tails.bkDuration[p + 1]! + extraWait;
          timeWarp += tails.bkTimeWarp[p + 1]! + extraWarp;
        }
        tails.breakAny[p] = 1;
        tails.bkDuration[p] = duration;
        tails.bkTimeWarp[p] = timeWarp;
        tails.bkEarliest[p] = earliest;
        tails.bkLatest[p] = latest;
      } else if (tails.breakAny[p + 1] === 1) {
        tails.breakAny[p] = 1;
        tails.bkDuration[p] = tails.bkDuration[p + 1]!;
        tails.bkTimeWarp[p] = tails.bkTimeWarp[p + 1]!;
        tails.bkEarliest[p] = tails.bkEarliest[p + 1]!;
        tails.bkLatest[p] = tails.bkLatest[p + 1]!;
      } else tails.breakAny[p] = 0;
    }
    this.baseStamp[r] = version;
    return tails;
  }

  /** Route r's visit suffixes for one end profile (computed at this version if not yet). */
  private suffixes(r: number, route: Route, profile: number): RouteTails {
    const tails = this.base(r, route);
    const version = this.solution.version[r]!;
    const cell = r * this.profiles + profile;
    if (this.stamp[cell] === version) return tails;
    const { instance } = this.solution;
    const { location, locationCount, distance, service, visitCount } = instance;
    const { open, close } = this.solution.windows;
    const time = this.profileTime[profile]!;
    const end = this.profileEnd[profile]!;
    const P = this.profiles;
    const n = route.nodes.length;
    // From the last position: the end alone.
    let at = (n - 1) * P + profile;
    tails.duration[at] = service[end]!;
    tails.timeWarp[at] = 0;
    tails.earliest[at] = open[end]!;
    tails.latest[at] = close[end]!;
    tails.distance[at] = 0;
    tails.first[at] = location[end]!;
    for (let p = n - 2; p >= 1; p--) {
      const node = route.nodes[p]!;
      const next = at;
      at = p * P + profile;
      if (node >= visitCount) {
        // A break (left out) or, never here, another vehicle node: the same as from the next position.
        tails.duration[at] = tails.duration[next]!;
        tails.timeWarp[at] = tails.timeWarp[next]!;
        tails.earliest[at] = tails.earliest[next]!;
        tails.latest[at] = tails.latest[next]!;
        tails.distance[at] = tails.distance[next]!;
        tails.first[at] = tails.first[next]!;
        continue;
      }
      // The visit, then the travel to the next summary.
      const leg = location[node]! * locationCount + tails.first[next]!;
      const travel = time[leg]!;
      const duration = service[node]!;
      const delta = duration + travel;
      const earliest = open[node]!;
      const latest = close[node]!;
      const extraWait = Math.max(tails.earliest[next]! - delta - latest, 0);
      const extraWarp = Math.max(earliest + delta - tails.latest[next]!, 0);
      tails.earliest[at] = Math.max(tails.earliest[next]! - delta, earliest) - extraWait;
      tails.latest[at] = Math.min(tails.latest[next]! - delta, latest) + extraWarp;
      tails.duration[at] = duration + tails.duration[next]! + travel + extraWait;
      tails.timeWarp[at] = tails.timeWarp[next]! + extraWarp;
      tails.distance[at] = distance[leg]! + tails.distance[next]!;
      tails.first[at] = location[node]!;
    }
    this.stamp[cell] = version;
    return tails;
  }
}

/** One route's summaries for `TailSummaries` (position-indexed; per profile: position × profiles + profile). */
class RouteTails {
  readonly visits: Int32Array;
  readonly breakAny: Uint8Array;
  readonly classes: Int32Array;
  readonly bkDuration: Float64Array;
  readonly bkTimeWarp: Float64Array;
  readonly bkEarliest: Float64Array;
  readonly bkLatest: Float64Array;
  readonly duration: Float64Array;
  readonly timeWarp: Float64Array;
  readonly earliest: Float64Array;
  readonly latest: Float64Array;
  readonly distance: Float64Array;
  readonly first: Int32Array;

  constructor(
    readonly size: number,
    profiles: number,
  ) {
    this.visits = new Int32Array(size);
    this.breakAny = new Uint8Array(size);
    this.classes = new Int32Array(size);
    this.bkDuration = new Float64Array(size);
    this.bkTimeWarp = new Float64Array(size);
    this.bkEarliest = new Float64Array(size);
    this.bkLatest = new Float64Array(size);
    this.duration = new Float64Array(size * profiles);
    this.timeWarp = new Float64Array(size * profiles);
    this.earliest = new Float64Array(size * profiles);
    this.latest = new Float64Array(size * profiles);
    this.distance = new Float64Array(size * profiles);
    this.first = new Int32Array(size * profiles);
  }
}
