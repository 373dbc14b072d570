// Route minimisation (Nagata & Bräysy 2009, "A powerful route minimization heuristic for the VRPTW"):
// empty a route and put its visits in an ejection pool; take visits from the pool one by one (last in,
// first out) and insert each at its cheapest feasible place, or else insert it anyway and eject up to
// `maxEjected` other visits of that route so that it becomes feasible again, choosing the set whose
// penalty counters (how often each visit came back to the pool) sum lowest, then perturb the solution
// with random feasible moves. When the pool is empty the route is gone and the next one is tried.
//
// The solution's routes stay feasible throughout (only unrouted visits are "broken"), so whatever is
// offered to the incumbent is feasible; the incumbent is restored at the end.
import type { Instance } from "./instance.ts";
import { Moves } from "./local-search.ts";
import type { Random } from "./random.ts";
import { EPSILON, Route, Segment, type Insertion, type NodeWindows } from "./route-state.ts";
import type { Budget, Incumbent } from "./search.ts";
import type { Solution } from "./solution.ts";

export interface RouteMinimisationParameters {
  /** Most visits ejected to make room for one (k_max). */
  readonly maxEjected: number;
  /** Random feasible moves tried after each insertion-ejection (I_rand). */
  readonly perturbMoves: number;
  /** Neighbours of a visit among which a perturbation move picks its partner. */
  readonly perturbNeighbours: number;
  /** Try a squeeze (penalised insertion, then repair) before ejecting. */
  readonly squeeze: boolean;
  /** Neighbours of a visit among which a squeeze repair move picks its partner. */
  readonly squeezeNeighbours: number;
  /**
   * Search-tree nodes one `insertEjecting` may visit over all its places (default unlimited). Without a set of
   * `maxEjected` or fewer that works, a route of n visits costs ~n^maxEjected / 6 nodes per position.
   */
  readonly maxSearchNodes?: number;
}

export const ROUTE_MINIMISATION_PARAMETERS: RouteMinimisationParameters = {
  maxEjected: 5,
  perturbMoves: 100,
  perturbNeighbours: 30,
  squeeze: true,
  squeezeNeighbours: 10,
};

/**
 * Route minimisation until the budget reaches `until` (a share, 0..1) or no vehicle can be spared;
 * leaves the incumbent (which only ever receives feasible solutions) in `solution`.
 */
export function minimiseRoutes(
  solution: Solution,
  budget: Budget,
  until: number,
  incumbent: Incumbent,
  random: Random,
  parameters: RouteMinimisationParameters = ROUTE_MINIMISATION_PARAMETERS,
): void {
  new RouteMinimiser(solution, random, parameters).run(budget, until, incumbent);
}

export class RouteMinimiser {
  /** Penalty counter p[v]: how often visit v was taken from the pool without a feasible place. */
  readonly penalty: Float64Array;
  private readonly ejection: EjectionSearch;
  private readonly moves: Moves;
  private readonly insertion: Insertion = { cost: 0, position: 0, window: 0 };
  private readonly scratch: Route[];
  private readonly ejectionSet: number[] = [];
  private readonly chosenSet: number[] = [];
  private readonly squeeze: Squeeze;
  private readonly places: { key: number; route: number; position: number; window: number }[] = [];
  /** Per route, its lowest penalty counter (during insertEjecting). */
  private readonly cheapest: Float64Array;
  /** Search-tree nodes the last `insertEjecting` visited (for tests and tuning). */
  searchNodes = 0;

  constructor(
    private readonly solution: Solution,
    private readonly random: Random,
    private readonly parameters: RouteMinimisationParameters = ROUTE_MINIMISATION_PARAMETERS,
  ) {
    const { instance } = solution;
    this.penalty = new Float64Array(instance.visitCount).fill(1);
    this.ejection = new EjectionSearch(instance, solution.windows, parameters.maxEjected);
    this.moves = new Moves(solution);
    this.cheapest = new Float64Array(solution.routes.length);
    this.squeeze = new Squeeze(solution, random, this.moves, parameters.squeezeNeighbours);
    this.scratch = solution.routes.map((route) => new Route(instance, route.vehicle, solution.windows, solution.weights));
  }

  run(budget: Budget, until: number, incumbent: Incumbent): void {
    const { solution } = this;
    if (solution.unassigned.size > 0) this.bringBackLeftOut(budget, until, incumbent);
    const fewest = vehicleLowerBound(solution);
    while (budget.progress() < until && solution.vehiclesUsed > fewest) {
      const pool = this.emptyARoute();
      if (pool.length === 0) break;
      this.penalty.fill(1);
      while (pool.length > 0 && budget.progress() < until) {
        budget.iterations++;
        this.step(pool);
      }
      if (pool.length > 0) break;
      if (allRoutesFeasible(solution)) incumbent.offer(solution);
    }
    solution.restore(incumbent.snapshot);
  }

  /**
   * Visits the first solution left out (regret insertion leaves some when the fleet is tight) go into the
   * pool before any route is emptied: removing vehicles while they wait would leave them a fleet too small
   * to take them back (as in fleet-min.ts). Each state leaving less out (by priority weight) is offered to the incumbent
   * (routes stay feasible); the repair ends when the pool is empty or after `stagnationLimit` steps
   * without such a gain, from the incumbent.
   */
  private bringBackLeftOut(budget: Budget, until: number, incumbent: Incumbent): void {
    const { solution } = this;
    const pool = this.random.shuffle([...solution.unassigned]);
    const patience = stagnationLimit(solution.instance.routable.length);
    this.penalty.fill(1);
    for (let sinceGain = 0; pool.length > 0 && sinceGain < patience && budget.progress() < until; sinceGain++) {
      budget.iterations++;
      this.step(pool);
      // By priority weight, not count (what the incumbent compares); routes stay feasible throughout.
      if (solution.droppedWeight < incumbent.dropped && incumbent.offer(solution)) sinceGain = 0;
    }
    solution.restore(incumbent.snapshot);
  }

  /** Takes the last visit of the pool and routes it, feasibly or by ejecting others into the pool. */
  step(pool: number[]): void {
    const v = pool.pop()!;
    if (this.insertFeasibly(v)) return;
    if (this.parameters.squeeze && this.squeeze.run(v)) return;
    this.penalty[v] = this.penalty[v]! + 1;
    const ejected = this.insertEjecting(v);
    if (ejected === undefined) pool.unshift(v);
    else pool.push(...ejected);
    this.perturb();
  }

  /**
   * Removes every visit of a used route, preferring routes with few visits and a high fixed cost; returns
   * them in random order (none if no used vehicle has a fixed cost).
   */
  emptyARoute(): number[] {
    const { solution, random } = this;
    const { instance, routes } = solution;
    let chosen = -1;
    let chosenScore = Infinity;
    for (let r = 0; r < routes.length; r++) {
      const route = routes[r]!;
      // A vehicle without fixed cost saves nothing when emptied.
      if (route.visitCount === 0 || !(instance.fixedCost[route.vehicle]! > 0)) continue;
      const score = (route.visitCount + random.next()) / instance.fixedCost[route.vehicle]!;
      if (score < chosenScore) {
        chosen = r;
        chosenScore = score;
      }
    }
    if (chosen < 0) return [];
    const visits = routes[chosen]!.nodes.filter((node) => node < instance.visitCount);
    for (const v of visits) solution.remove(v);
    return random.shuffle(visits);
  }

  /** Cheapest feasible insertion of v into a used route; false if there is none. */
  insertFeasibly(v: number): boolean {
    const { solution, insertion } = this;
    const { instance, routes } = solution;
    let bestRoute = -1;
    let bestCost = Infinity;
    let bestPosition = 0;
    let bestWindow = 0;
    for (let r = 0; r < routes.length; r++) {
      const route = routes[r]!;
      if (route.visitCount === 0 || instance.compatible[v * instance.vehicleCount + route.vehicle] !== 1) continue;
      if (route.findInsertion(v, bestCost, undefined, insertion)) {
        bestRoute = r;
        bestCost = insertion.cost;
        bestPosition = insertion.position;
        bestWindow = insertion.window;
      }
    }
    if (bestRoute < 0) return false;
    solution.insert(v, bestRoute, bestPosition, bestWindow);
    return true;
  }

  /**
   * Inserts v where the visits to eject have the lowest total penalty and ejects
   * them; returns the ejected visits, or undefined if no place works with at most maxEjected ejections.
   */
  insertEjecting(v: number): number[] | undefined {
    const { solution, random, ejection, ejectionSet, chosenSet, places } = this;
    const { instance, routes, windows } = solution;
    // Places (route, position, window) are searched by increasing penalty of the plain insertion, ties at
    // random, so that a cheap ejection set is met early and bounds the rest; among sets of equal penalty
    // the first found is kept.
    places.length = 0;
    for (let r = 0; r < routes.length; r++) {
      const route = routes[r]!;
      if (route.visitCount === 0 || instance.compatible[v * instance.vehicleCount + route.vehicle] !== 1) continue;
      let cheapest = Infinity;
      for (const node of route.nodes) if (node < instance.visitCount) cheapest = Math.min(cheapest, this.penalty[node]!);
      this.cheapest[r] = cheapest;
      for (let w = instance.windowOffset[v]!; w < instance.windowOffset[v + 1]!; w++) {
        for (let p = 1; p < route.nodes.length; p++) {
          places.push({ key: this.squeeze.insertionPenalty(v, r, p, w) + 1e-6 * random.next(), route: r, position: p, window: w });
        }
      }
    }
    places.sort((a, b) => a.key - b.key);
    let best = Infinity;
    let bestRoute = -1;
    let bestPosition = 0;
    let bestWindow = 0;
    const savedOpen = windows.open[v]!;
    const savedClose = windows.close[v]!;
    const nodeBudget = this.parameters.maxSearchNodes ?? Infinity;
    this.searchNodes = 0;
    for (const { route: r, position: p, window: w } of places) {
      if (this.searchNodes >= nodeBudget) break;
      // Every ejection costs at least the route's lowest counter, and v fits nowhere without one.
      if (this.cheapest[r]! >= best) continue;
      const nodes = routes[r]!.nodes;
      const scratch = this.scratch[r]!;
      windows.open[v] = instance.windowOpen[w]!;
      windows.close[v] = instance.windowClose[w]!;
      const withV = scratch.nodes;
      withV.length = 0;
      for (let i = 0; i < p; i++) withV.push(nodes[i]!);
      withV.push(v);
      for (let i = p; i < nodes.length; i++) withV.push(nodes[i]!);
      scratch.update();
      const found = ejection.search(scratch, p, this.penalty, best, ejectionSet, nodeBudget - this.searchNodes);
      this.searchNodes += ejection.visited;
      if (found === Infinity) continue;
      best = found;
      bestRoute = r;
      bestPosition = p;
      bestWindow = w;
      chosenSet.length = 0;
      chosenSet.push(...ejectionSet);
    }
    windows.open[v] = savedOpen;
    windows.close[v] = savedClose;
    if (bestRoute < 0) return undefined;
    solution.insert(v, bestRoute, bestPosition, bestWindow);
    const nodes = routes[bestRoute]!.nodes;
    const ejected = chosenSet.map((q) => nodes[q]!);
    for (const u of ejected) solution.remove(u);
    return ejected;
  }

  /** Random feasible relocate, swap and 2-opt* moves between nearby routes (diversification). */
  perturb(): void {
    const { solution, random, moves, parameters } = this;
    const { instance, routeOf } = solution;
    const { routable, neighbours, neighbourCount } = instance;
    const near = Math.min(parameters.perturbNeighbours, neighbourCount);
    if (near === 0) return;
    for (let i = 0; i < parameters.perturbMoves; i++) {
      const u = routable[random.int(routable.length)]!;
      const v = neighbours[u * neighbourCount + random.int(near)]!;
      const move = random.int(4);
      if (routeOf[u]! < 0 || routeOf[v]! < 0 || routeOf[u] === routeOf[v]) continue;
      if (move < 2) {
        if (moves.relocateDelta(u, v, move === 1) < Infinity) moves.applyRelocate(u, v, move === 1);
      } else if (move === 2) {
        if (moves.swapDelta(u, v) < Infinity) moves.applySwap(u, v);
      } else if (moves.twoOptStarDelta(u, v) < Infinity) {
        moves.applyTwoOptStar(u, v);
      }
    }
  }
}

/**
 * Squeeze: insert a visit where the penalty (time warp, capacity, distance and duration excess) grows
 * least, then repair by relocate, swap and 2-opt* moves that lower the penalty, always working on a
 * route picked at random among the infeasible ones. Undone unless every route ends feasible.
 */
export class Squeeze {
  private readonly a: Segment;
  private readonly b: Segment;
  private readonly loadA: Float64Array;
  private readonly loadB: Float64Array;
  private readonly infeasible: number[] = [];

  constructor(
    private readonly solution: Solution,
    private readonly random: Random,
    private readonly moves: Moves,
    private readonly neighbours: number,
  ) {
    this.a = new Segment(solution.instance, solution.windows);
    this.b = new Segment(solution.instance, solution.windows);
    this.loadA = new Float64Array(solution.instance.dims);
    this.loadB = new Float64Array(solution.instance.dims);
  }

  /** Routes v (which is unrouted) feasibly and returns true, or leaves the solution as it was. */
  run(v: number): boolean {
    const { solution, random } = this;
    if (!this.insertLeastPenalised(v)) return false;
    const { routes } = solution;
    for (;;) {
      this.infeasible.length = 0;
      for (let r = 0; r < routes.length; r++)
        if (routes[r]!.visitCount > 0 && this.routePenalty(routes[r]!) > EPSILON) this.infeasible.push(r);
      if (this.infeasible.length === 0) break;
      if (!this.repair(this.infeasible[random.int(this.infeasible.length)]!)) {
        solution.rollback();
        return false;
      }
    }
    solution.commit();
    return true;
  }

  /** Penalty of a whole route as it is. */
  routePenalty(route: Route): number {
    const last = route.nodes.length - 1;
    const { instance } = this.solution;
    const k = route.vehicle;
    let penalty =
      route.fTimeWarp[last]! +
      Math.max(0, route.fDistance[last]! - instance.maxDistance[k]!) +
      Math.max(0, route.fDuration[last]! - instance.maxDuration[k]!);
    for (let d = 0; d < instance.dims; d++) penalty += Math.max(0, route.load[d]! - instance.capacity[k * instance.dims + d]!);
    return penalty;
  }

  private segmentPenalty(segment: Segment, vehicle: number, load: Float64Array): number {
    const { instance } = this.solution;
    let penalty =
      segment.timeWarp +
      Math.max(0, segment.distance - instance.maxDistance[vehicle]!) +
      Math.max(0, segment.duration - instance.maxDuration[vehicle]!);
    for (let d = 0; d < instance.dims; d++) penalty += Math.max(0, load[d]! - instance.capacity[vehicle * instance.dims + d]!);
    return penalty;
  }

  /** Penalty of route r with v inserted at position p in window w (v unrouted). */
  insertionPenalty(v: number, r: number, p: number, w: number): number {
    const { solution, a, loadA } = this;
    const { instance } = solution;
    const route = solution.routes[r]!;
    for (let d = 0; d < instance.dims; d++) loadA[d] = route.load[d]! + instance.demand[v * instance.dims + d]!;
    a.setPrefix(route, p - 1)
      .appendNode(v, instance.windowOpen[w]!, instance.windowClose[w]!)
      .appendSuffix(route, p);
    return this.segmentPenalty(a, route.vehicle, loadA);
  }

  /** Opens the journal and inserts v at its least penalised place in a used route; false (journal closed) if none. */
  private insertLeastPenalised(v: number): boolean {
    const { solution, a, loadA } = this;
    const { instance, routes, windows } = solution;
    const { dims, demand } = instance;
    let best = Infinity;
    let bestRoute = -1;
    let bestPosition = 0;
    let bestWindow = 0;
    for (let r = 0; r < routes.length; r++) {
      const route = routes[r]!;
      if (route.visitCount === 0 || instance.compatible[v * instance.vehicleCount + route.vehicle] !== 1) continue;
      if (route.visitCount + 1 > instance.maxVisits[route.vehicle]!) continue;
      for (let d = 0; d < dims; d++) loadA[d] = route.load[d]! + demand[v * dims + d]!;
      for (let w = instance.windowOffset[v]!; w < instance.windowOffset[v + 1]!; w++) {
        for (let p = 1; p < route.nodes.length; p++) {
          a.setPrefix(route, p - 1)
            .appendNode(v, instance.windowOpen[w]!, instance.windowClose[w]!)
            .appendSuffix(route, p);
          const penalty = this.segmentPenalty(a, route.vehicle, loadA);
          if (penalty < best) {
            best = penalty;
            bestRoute = r;
            bestPosition = p;
            bestWindow = w;
          }
        }
      }
    }
    if (bestRoute < 0) return false;
    void windows;
    solution.begin();
    solution.insert(v, bestRoute, bestPosition, bestWindow);
    return true;
  }

  /** Applies the move that lowers the penalty most for a visit of route r and one of its neighbours elsewhere; false if none does. */
  private repair(r: number): boolean {
    const { solution, moves } = this;
    const { instance, routes, routeOf } = solution;
    const route = routes[r]!;
    const near = Math.min(this.neighbours, instance.neighbourCount);
    let best = -EPSILON;
    let bestMove = -1;
    let bestU = 0;
    let bestV = 0;
    const own = this.routePenalty(route);
    for (const u of route.nodes) {
      if (u >= instance.visitCount) continue;
      for (let k = 0; k < near; k++) {
        const v = instance.neighbours[u * instance.neighbourCount + k]!;
        const rv = routeOf[v]!;
        if (rv < 0 || rv === r) continue;
        const before = own + this.routePenalty(routes[rv]!);
        for (let move = 0; move < 5; move++) {
          const after =
            move < 2
              ? this.relocated(u, v, move === 1)
              : move === 2
                ? this.swapped(u, v)
                : move === 3
                  ? this.twoOptStar(u, v)
                  : this.twoOptStar(v, u);
          if (after - before < best) {
            best = after - before;
            bestMove = move;
            bestU = u;
            bestV = v;
          }
        }
      }
    }
    if (bestMove < 0) return false;
    if (bestMove < 2) moves.applyRelocate(bestU, bestV, bestMove === 1);
    else if (bestMove === 2) moves.applySwap(bestU, bestV);
    else if (bestMove === 3) moves.applyTwoOptStar(bestU, bestV);
    else moves.applyTwoOptStar(bestV, bestU);
    return true;
  }

  /** Penalty of both routes after moving u next to v (before, or after when `after`). */
  private relocated(u: number, v: number, after: boolean): number {
    const { solution, a, b, loadA, loadB } = this;
    const { instance, routes, routeOf, positionOf } = solution;
    const from = routes[routeOf[u]!]!;
    const to = routes[routeOf[v]!]!;
    if (instance.compatible[u * instance.vehicleCount + to.vehicle] !== 1 || to.visitCount + 1 > instance.maxVisits[to.vehicle]!)
      return Infinity;
    const { dims, demand } = instance;
    for (let d = 0; d < dims; d++) {
      loadA[d] = from.load[d]! - demand[u * dims + d]!;
      loadB[d] = to.load[d]! + demand[u * dims + d]!;
    }
    const i = positionOf[u]!;
    const p = positionOf[v]! + (after ? 1 : 0);
    const penaltyA =
      from.visitCount === 1 ? 0 : this.segmentPenalty(a.setPrefix(from, i - 1).appendSuffix(from, i + 1), from.vehicle, loadA);
    b.setPrefix(to, p - 1)
      .append(u)
      .appendSuffix(to, p);
    return penaltyA + this.segmentPenalty(b, to.vehicle, loadB);
  }

  private swapped(u: number, v: number): number {
    const { solution, a, b, loadA, loadB } = this;
    const { instance, routes, routeOf, positionOf } = solution;
    const ru = routes[routeOf[u]!]!;
    const rv = routes[routeOf[v]!]!;
    if (
      instance.compatible[u * instance.vehicleCount + rv.vehicle] !== 1 ||
      instance.compatible[v * instance.vehicleCount + ru.vehicle] !== 1
    )
      return Infinity;
    const { dims, demand } = instance;
    for (let d = 0; d < dims; d++) {
      loadA[d] = ru.load[d]! - demand[u * dims + d]! + demand[v * dims + d]!;
      loadB[d] = rv.load[d]! - demand[v * dims + d]! + demand[u * dims + d]!;
    }
    const i = positionOf[u]!;
    const j = positionOf[v]!;
    a.setPrefix(ru, i - 1)
      .append(v)
      .appendSuffix(ru, i + 1);
    b.setPrefix(rv, j - 1)
      .append(u)
      .appendSuffix(rv, j + 1);
    return this.segmentPenalty(a, ru.vehicle, loadA) + this.segmentPenalty(b, rv.vehicle, loadB);
  }

  /** u's route keeps its head up to u and takes v's route from v on; v's route takes the rest of u's. */
  private twoOptStar(u: number, v: number): number {
    const { solution, a, b, loadA, loadB } = this;
    const { instance, routes, routeOf, positionOf } = solution;
    const ra = routes[routeOf[u]!]!;
    const rb = routes[routeOf[v]!]!;
    const i = positionOf[u]!;
    const j = positionOf[v]!;
    if (instance.vehicleClass[ra.vehicle] !== instance.vehicleClass[rb.vehicle]) return Infinity;
    if (i < lastBreakPosition(ra) || j <= lastBreakPosition(rb)) return Infinity;
    const breaksA = instance.breakNodes[ra.vehicle]!.length;
    const breaksB = instance.breakNodes[rb.vehicle]!.length;
    const visitsA = i - breaksA + (rb.nodes.length - 1 - j);
    const visitsB = j - 1 - breaksB + (ra.nodes.length - 2 - i);
    if (visitsA > instance.maxVisits[ra.vehicle]! || visitsB > instance.maxVisits[rb.vehicle]!) return Infinity;
    const { dims } = instance;
    for (let d = 0; d < dims; d++) {
      loadA[d] = ra.fLoad[i * dims + d]! + rb.bLoad[j * dims + d]!;
      loadB[d] = rb.fLoad[(j - 1) * dims + d]! + ra.bLoad[(i + 1) * dims + d]!;
    }
    const penaltyA = visitsA === 0 ? 0 : this.segmentPenalty(a.setPrefix(ra, i).appendSuffix(rb, j), ra.vehicle, loadA);
    const penaltyB = visitsB === 0 ? 0 : this.segmentPenalty(b.setPrefix(rb, j - 1).appendSuffix(ra, i + 1), rb.vehicle, loadB);
    return penaltyA + penaltyB;
  }
}

/** Position of the route's last break, 0 if it has none. */
function lastBreakPosition(route: Route): number {
  const { nodes, instance } = route;
  if (instance.breakNodes[route.vehicle]!.length === 0) return 0;
  for (let i = nodes.length - 2; i > 0; i--) if (instance.isBreak[nodes[i]!]) return i;
  return 0;
}

/**
 * Finds, for a route holding one visit too many, the set of at most `maxEjected` visits (never the one
 * at position `fixed`) whose removal leaves it feasible, with the lowest sum of penalties. Sets are
 * enumerated in lexicographic order of positions with two prunings: a partial set whose penalty already
 * reaches the best is dropped, and once a kept visit before the next candidate position makes the kept
 * prefix infeasible (time warp, distance or duration, which can only grow) no later position can help.
 */
export class EjectionSearch {
  /** Search-tree nodes visited by the last search (for tests and tuning). */
  visited = 0;
  private readonly prefixes: Segment[];
  private readonly probe: Segment;
  /** Demand removed by the ejections so far, per depth: removed[depth * dims + d]. */
  private readonly removed: Float64Array;
  private readonly chosen: number[];
  private route!: Route;
  private fixed = 0;
  private penalty!: Float64Array;
  private best = Infinity;
  private fewestEjected = 0;
  private bestSet: number[] = [];
  private nodeLimit = Infinity;

  constructor(
    private readonly instance: Instance,
    windows: NodeWindows,
    private readonly maxEjected: number,
  ) {
    this.prefixes = Array.from({ length: maxEjected + 1 }, () => new Segment(instance, windows));
    this.probe = new Segment(instance, windows);
    this.removed = new Float64Array((maxEjected + 1) * Math.max(1, instance.dims));
    this.chosen = new Array<number>(maxEjected).fill(0);
  }

  /**
   * Lowest total penalty below `bound` of an ejection set that makes `route` feasible, its positions
   * (ascending) in `out`; Infinity (and `out` untouched) if there is none. After `nodeLimit` search-tree
   * nodes the search stops with the best set found so far.
   */
  search(route: Route, fixed: number, penalty: Float64Array, bound: number, out: number[], nodeLimit = Infinity): number {
    this.nodeLimit = nodeLimit;
    this.route = route;
    this.fixed = fixed;
    this.penalty = penalty;
    this.best = bound;
    this.bestSet = out;
    this.visited = 0;
    this.fewestEjected = Math.max(0, route.visitCount - this.instance.maxVisits[route.vehicle]!);
    if (this.fewestEjected > this.maxEjected) return Infinity;
    this.removed.fill(0, 0, this.instance.dims);
    this.prefixes[0]!.setPrefix(route, 0);
    const before = this.best;
    this.explore(0, 1, 0);
    return this.best < before ? this.best : Infinity;
  }

  private explore(depth: number, from: number, sum: number): void {
    if (this.visited >= this.nodeLimit) return;
    this.visited++;
    const { route, instance, penalty } = this;
    const { nodes } = route;
    const prefix = this.prefixes[depth]!;
    if (depth >= this.fewestEjected && this.loadFits(depth)) {
      this.probe.copyFrom(prefix).appendSuffix(route, from);
      if (this.probe.feasibleFor(route.vehicle)) {
        // Any larger set costs more: no need to go deeper.
        this.best = sum;
        this.bestSet.length = 0;
        for (let i = 0; i < depth; i++) this.bestSet.push(this.chosen[i]!);
        return;
      }
    }
    if (depth === this.maxEjected) return;
    const dims = instance.dims;
    const kept = this.prefixes[depth + 1]!.copyFrom(prefix);
    for (let q = from; q < nodes.length - 1; q++) {
      const node = nodes[q]!;
      if (node < instance.visitCount && q !== this.fixed && sum + penalty[node]! < this.best) {
        this.chosen[depth] = q;
        for (let d = 0; d < dims; d++) {
          this.removed[(depth + 1) * dims + d] = this.removed[depth * dims + d]! + instance.demand[node * dims + d]!;
        }
        this.explore(depth + 1, q + 1, sum + penalty[node]!);
      }
      kept.append(node);
      if (!kept.feasibleFor(route.vehicle)) break;
    }
  }

  private loadFits(depth: number): boolean {
    const { dims, capacity } = this.instance;
    const { route } = this;
    for (let d = 0; d < dims; d++) {
      if (route.load[d]! - this.removed[depth * dims + d]! > capacity[route.vehicle * dims + d]! + EPSILON) return false;
    }
    return true;
  }
}

function allRoutesFeasible(solution: Solution): boolean {
  return solution.routes.every((route) => route.visitCount === 0 || route.feasible);
}

/**
 * Patience of both fleet phases (here and in fleet-min.ts): iterations without a visit fewer left out,
 * 20 per routable visit and at least 2,000, before they give up on what they are trying.
 */
export function stagnationLimit(visits: number): number {
  return Math.max(STAGNATION_MIN, STAGNATION_PER_VISIT * visits);
}
const STAGNATION_MIN = 2000;
const STAGNATION_PER_VISIT = 20;

/** No fewer vehicles can carry the routable demand, dimension by dimension. */
export function vehicleLowerBound(solution: Solution): number {
  const { instance } = solution;
  let bound = 1;
  for (let d = 0; d < instance.dims; d++) {
    let total = 0;
    for (const v of instance.routable) total += instance.demand[v * instance.dims + d]!;
    let largest = 0;
    for (let k = 0; k < instance.vehicleCount; k++) largest = Math.max(largest, instance.capacity[k * instance.dims + d]!);
    bound = Math.max(bound, Math.ceil(total / largest - 1e-9));
  }
  return bound;
}
