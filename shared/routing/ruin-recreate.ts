// Slack Induction by String Removals (Christiaens & Vanden Berghe 2020): remove a few strings of
// consecutive visits from routes near a random seed visit, then greedily re-insert every removed and
// unassigned visit at its cheapest position, skipping positions at random ("blinks").
import { Blinks, type Random } from "./random.ts";
import type { Insertion } from "./route-state.ts";
import type { Solution } from "./solution.ts";

export interface RuinRecreateParameters {
  /** Average number of visits removed per ruin. */
  readonly averageRemoved: number;
  /** Longest string removed from one route. */
  readonly maxStringLength: number;
  /** Probability of a split string (a string with a kept block in it) rather than a plain one. */
  readonly splitRate: number;
  /** Chance, per extra visit, to stop growing the kept block of a split string. */
  readonly splitDepth: number;
  readonly blinkRate: number;
}

export const SISR_PARAMETERS: RuinRecreateParameters = {
  averageRemoved: 10,
  maxStringLength: 10,
  splitRate: 0.5,
  splitDepth: 0.01,
  blinkRate: 0.01,
};

/**
 * Nearest neighbours whose routes a removed visit is offered first: enough that long routes (GH r2/rc2) are
 * reached, few enough to save the scan of every route (README, "Constants and their measurements").
 */
const NEARBY_NEIGHBOURS = 80;

export class RuinRecreate {
  private readonly insertion: Insertion = { cost: 0, position: 0, window: 0 };
  private readonly best: Insertion = { cost: 0, position: 0, window: 0 };
  private bestRoute = -1;
  /** Per route and per vehicle class, the recreate step that last tried it. */
  private readonly routeSeen: Int32Array;
  private readonly classSeen: Int32Array;
  private stamp = 0;
  /** Sort keys of the recreate orders: total demand, and distance from the first vehicle's start. */
  private readonly demandOf: Float64Array;
  private readonly depotDistanceOf: Float64Array;
  private readonly ruined = new Set<number>();
  /** Scratch: the visits of the route a string is cut from. */
  private readonly visits: number[] = [];
  private readonly blinks: Blinks;
  /**
   * Per visit and route, the route's version (`Solution.version`) when the visit was found to fit nowhere in
   * it (no bound, no blink): until the route changes, trying again would only fail again. Visits left out
   * (most of them in fleet minimisation) are otherwise tried against every route at every step.
   */
  private readonly misfit: Int32Array;

  constructor(
    private readonly solution: Solution,
    private readonly random: Random,
    private readonly parameters: RuinRecreateParameters = SISR_PARAMETERS,
  ) {
    const { instance } = solution;
    this.routeSeen = new Int32Array(instance.vehicleCount);
    this.classSeen = new Int32Array(instance.vehicleCount);
    this.misfit = new Int32Array(instance.visitCount * instance.vehicleCount);
    this.demandOf = new Float64Array(instance.visitCount);
    this.depotDistanceOf = new Float64Array(instance.visitCount);
    const depot = instance.vehicleCount > 0 ? instance.location[instance.startNode[0]!]! : 0;
    for (const v of instance.routable) {
      for (let d = 0; d < instance.dims; d++) this.demandOf[v] = this.demandOf[v]! + instance.demand[v * instance.dims + d]!;
      this.depotDistanceOf[v] = instance.distance[depot * instance.locationCount + instance.location[v]!]!;
    }
    this.blinks = new Blinks(random, parameters.blinkRate);
  }

  /** Removes strings around `seed` (default: a random routed visit); returns the removed visits. */
  ruin(seed?: number): number[] {
    const { solution, random, parameters } = this;
    const { instance, routes, routeOf } = solution;
    let routed = 0;
    let used = 0;
    for (const route of routes) {
      if (route.visitCount > 0) {
        routed += route.visitCount;
        used++;
      }
    }
    if (routed === 0) return [];
    const maxLength = Math.min(parameters.maxStringLength, routed / used);
    const maxStrings = (4 * parameters.averageRemoved) / (1 + maxLength) - 1;
    const strings = Math.floor(random.next() * maxStrings) + 1;

    while (seed === undefined || (routeOf[seed]! < 0 && !solution.unassigned.has(seed))) {
      seed = instance.routable[random.int(instance.routable.length)]!;
    }
    const removed: number[] = [];
    this.ruined.clear();
    for (let k = -1; k < instance.neighbourCount && this.ruined.size < strings; k++) {
      const visit = k < 0 ? seed : instance.neighbours[seed * instance.neighbourCount + k]!;
      const r = routeOf[visit]!;
      if (r < 0 || this.ruined.has(r)) continue;
      this.ruined.add(r);
      const route = routes[r]!;
      const visits = this.visits;
      visits.length = 0;
      for (const node of route.nodes) if (node < instance.visitCount) visits.push(node);
      const length = Math.floor(random.next() * Math.min(route.visitCount, maxLength)) + 1;
      const at = visits.indexOf(visit);
      if (length === visits.length || random.next() >= parameters.splitRate) {
        this.pickString(visits, at, length, 0, removed);
      } else {
        let kept = 1;
        while (length + kept < visits.length && random.next() > parameters.splitDepth) kept++;
        this.pickString(visits, at, length + kept, kept, removed);
      }
    }
    if (instance.hasPairs) {
      // A pair leaves as a whole.
      for (const v of removed) if (routeOf[v]! >= 0) solution.removeWithPartner(v);
      return removed;
    }
    solution.removeAll(removed);
    return removed;
  }

  /**
   * Re-inserts the visits at their cheapest feasible positions, in one of SISR's orders. A visit is
   * first offered to the routes of its nearest neighbours (and to unused vehicles, one per class, if
   * `openVehicles`), and to every other route only if none of those can take it: on large instances
   * this saves most of the work and rarely misses the best position. Visits that fit nowhere stay unassigned.
   * With `hardness` (per visit), the hardest visits go first instead.
   */
  recreate(visits: number[], openVehicles: boolean, hardness?: Float64Array, ordered = false): void {
    const { solution } = this;
    const { instance, routes, routeOf } = solution;
    const nearby = Math.min(instance.neighbourCount, NEARBY_NEIGHBOURS);
    if (!ordered) this.order(visits, hardness);
    // Routes with visits: once the neighbours have led to all of them, the rest of the list leads nowhere new.
    let used = solution.vehiclesUsed;
    for (const v of visits) {
      // A pair goes in as a whole, with its pickup; its delivery is unassigned as long as the pickup is.
      if (instance.hasPairs && instance.partner[v]! >= 0 && !instance.isPickup[v]) continue;
      this.bestRoute = -1;
      this.best.cost = Infinity;
      this.stamp++;
      for (let k = 0, reached = 0; k < nearby && reached < used; k++) {
        const r = routeOf[instance.neighbours[v * instance.neighbourCount + k]!]!;
        if (r < 0 || this.routeSeen[r] === this.stamp) continue;
        reached++;
        this.offer(v, r);
      }
      if (openVehicles) for (let r = 0; r < routes.length; r++) if (routes[r]!.visitCount === 0) this.offer(v, r);
      if (this.bestRoute < 0) for (let r = 0; r < routes.length; r++) if (routes[r]!.visitCount > 0) this.offer(v, r);
      if (this.bestRoute < 0) continue;
      if (routes[this.bestRoute]!.visitCount === 0) used++;
      if (instance.hasPairs && instance.partner[v]! >= 0) solution.insertPair(v, this.bestRoute, this.best);
      else solution.insert(v, this.bestRoute, this.best.position, this.best.window);
    }
  }

  /** Sorts the visits in the order `recreate` inserts them (one of SISR's, or hardest first), higher priorities first. */
  order(visits: number[], hardness?: Float64Array): number[] {
    const { instance } = this.solution;
    if (hardness) this.random.shuffle(visits).sort((a, b) => hardness[b]! - hardness[a]!);
    else this.sortForRecreate(visits);
    // Higher priorities claim the room first (a stable sort keeps the order within a priority).
    if (instance.hasPriorities) visits.sort((a, b) => instance.priority[b]! - instance.priority[a]!);
    return visits;
  }

  /** Puts visit v (not one of a pair) alone into the empty route r if its vehicle may serve it there; whether it did. */
  openWith(v: number, r: number): boolean {
    const { instance, routes } = this.solution;
    const route = routes[r]!;
    if (instance.compatible[v * instance.vehicleCount + route.vehicle] !== 1) return false;
    if (!route.findInsertion(v, Infinity, undefined, this.insertion)) return false;
    this.solution.insert(v, r, this.insertion.position, this.insertion.window);
    return true;
  }

  /** Tries route r for visit v once per recreate step, keeping the cheapest insertion in `best`. */
  private offer(v: number, r: number): void {
    const { instance, routes } = this.solution;
    const route = routes[r]!;
    if (this.routeSeen[r] === this.stamp) return;
    this.routeSeen[r] = this.stamp;
    if (instance.compatible[v * instance.vehicleCount + route.vehicle] !== 1) return;
    if (route.visitCount === 0) {
      // Unused vehicles of one class are interchangeable: try the first of each.
      const vehicleClass = instance.vehicleClass[route.vehicle]!;
      if (this.classSeen[vehicleClass] === this.stamp) return;
      this.classSeen[vehicleClass] = this.stamp;
    }
    if (instance.hasPairs && instance.partner[v]! >= 0) {
      if (route.findPairInsertion(v, this.best.cost, this.blinks, this.insertion)) this.keep(r);
      return;
    }
    const cell = v * instance.vehicleCount + r;
    const version = this.solution.version[r]!;
    if (this.misfit[cell] === version) return;
    const unbounded = this.best.cost === Infinity;
    if (route.findInsertion(v, this.best.cost, this.blinks, this.insertion)) this.keep(r);
    else if (unbounded && !this.insertion.blinked) this.misfit[cell] = version;
  }

  /** The insertion just found in route r is the best so far. */
  private keep(r: number): void {
    this.bestRoute = r;
    this.best.cost = this.insertion.cost;
    this.best.position = this.insertion.position;
    this.best.window = this.insertion.window;
    this.best.position2 = this.insertion.position2;
    this.best.window2 = this.insertion.window2;
  }

  /** Adds to `out` `length` consecutive visits containing visits[at], at a random offset, minus a random kept block of `kept`. */
  private pickString(visits: number[], at: number, length: number, kept: number, out: number[]): void {
    const { random } = this;
    const firstStart = Math.max(0, at - length + 1);
    const lastStart = Math.min(at, visits.length - length);
    const start = firstStart + random.int(lastStart - firstStart + 1);
    const keptStart = kept === 0 ? length : random.int(length - kept + 1);
    for (let i = 0; i < length; i++) if (i < keptStart || i >= keptStart + kept) out.push(visits[start + i]!);
  }

  private sortForRecreate(visits: number[]): void {
    const { random, demandOf, depotDistanceOf } = this;
    // SISR's orders, weighted 4:4:2:1.
    const draw = random.int(11);
    if (draw < 4) random.shuffle(visits);
    else if (draw < 8) visits.sort((a, b) => demandOf[b]! - demandOf[a]! || a - b);
    else if (draw < 10) visits.sort((a, b) => depotDistanceOf[b]! - depotDistanceOf[a]! || a - b);
    else visits.sort((a, b) => depotDistanceOf[a]! - depotDistanceOf[b]! || a - b);
  }
}
