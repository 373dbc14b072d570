// A short local search between routes: relocate a visit next to one of its nearest neighbours, swap
// it with that neighbour, or exchange route tails so that it is followed by the neighbour (2-opt*).
// Every move is evaluated in O(1) from the routes' segment summaries; the first improving one is applied.
import type { Route } from "./route-state.ts";
import { Segment } from "./route-state.ts";
import type { Solution } from "./solution.ts";

/** Neighbours tried per visit. */
const NEIGHBOURS_TRIED = 30;
const IMPROVEMENT = 1e-9;

/**
 * Per solution, per visit u and neighbour rank k, the versions (`Solution.version`) of u's and the neighbour's
 * routes when no move between them improved: a move's delta depends on those two routes only, and a version comes
 * back only with the same nodes and windows, so while both are unchanged the pair would fail again. Saves the
 * re-evaluation of every unchanged pair on each pass, the last one above all (which only confirms), and across
 * calls (the polish of each new best meets mostly the routes it met before). Same moves in the same order.
 */
const failedAt = new WeakMap<Solution, Int32Array>();

export function improveLocally(solution: Solution): void {
  const moves = new Moves(solution);
  const { instance, routeOf, version } = solution;
  const tried = Math.min(NEIGHBOURS_TRIED, instance.neighbourCount);
  let failed = failedAt.get(solution);
  if (!failed) {
    failed = new Int32Array(instance.visitCount * tried * 2);
    failedAt.set(solution, failed);
  }
  for (let improved = true; improved; ) {
    improved = false;
    for (const u of instance.routable) {
      if (routeOf[u]! < 0) continue;
      for (let k = 0; k < tried; k++) {
        const v = instance.neighbours[u * instance.neighbourCount + k]!;
        if (routeOf[v]! < 0 || routeOf[v] === routeOf[u]) continue;
        const cell = 2 * (u * tried + k);
        const versionU = version[routeOf[u]!]!;
        const versionV = version[routeOf[v]!]!;
        if (failed[cell] === versionU && failed[cell + 1] === versionV) continue;
        if (moves.tryRelocate(u, v) || moves.trySwap(u, v) || moves.tryTwoOptStar(u, v)) {
          improved = true;
          break;
        }
        failed[cell] = versionU;
        failed[cell + 1] = versionV;
      }
    }
  }
}

/** Move evaluation (cost deltas, Infinity when infeasible) and application. */
export class Moves {
  private readonly segment: Segment;
  private readonly load: Float64Array;
  private readonly otherLoad: Float64Array;

  constructor(private readonly solution: Solution) {
    this.segment = new Segment(solution.instance, solution.windows);
    this.load = new Float64Array(solution.instance.dims);
    this.otherLoad = new Float64Array(solution.instance.dims);
  }

  /** Moves visit u into v's route, right before (`after` false) or after v. */
  relocateDelta(u: number, v: number, after: boolean): number {
    const { solution } = this;
    const from = solution.routes[solution.routeOf[u]!]!;
    const to = solution.routes[solution.routeOf[v]!]!;
    const { instance } = solution;
    if (!instance.compatible[u * instance.vehicleCount + to.vehicle] || to.visitCount + 1 > instance.maxVisits[to.vehicle]!)
      return Infinity;
    if (!to.fitsLoad(u, 1)) return Infinity;
    // Pair visits move only as a pair (ruin-and-recreate does that); u's demand rides along up to u.
    if (
      instance.hasPairs &&
      (instance.partner[u]! >= 0 || (to.pairVisits > 0 && !to.peakFits(to.fPeak, solution.positionOf[v]! + (after ? 0 : -1), u, 1)))
    ) {
      return Infinity;
    }
    const removal = from.removalDelta(solution.positionOf[u]!);
    if (removal === Infinity) return Infinity;
    const p = solution.positionOf[v]! + (after ? 1 : 0);
    this.segment
      .setPrefix(to, p - 1)
      .append(u)
      .appendSuffix(to, p);
    if (!this.segment.feasibleFor(to.vehicle)) return Infinity;
    return removal + to.costOf(this.segment.distance, to.underloadWith(u)) - to.cost;
  }

  /** Exchanges visits u and v, which are in different routes. */
  swapDelta(u: number, v: number): number {
    const { solution } = this;
    const { instance } = solution;
    const a = solution.routes[solution.routeOf[u]!]!;
    const b = solution.routes[solution.routeOf[v]!]!;
    if (!instance.compatible[u * instance.vehicleCount + b.vehicle] || !instance.compatible[v * instance.vehicleCount + a.vehicle]) {
      return Infinity;
    }
    if (instance.hasPairs && (instance.partner[u]! >= 0 || instance.partner[v]! >= 0)) return Infinity;
    const costA = this.replacedCost(a, solution.positionOf[u]!, v, u);
    if (costA === Infinity) return Infinity;
    const costB = this.replacedCost(b, solution.positionOf[v]!, u, v);
    if (costB === Infinity) return Infinity;
    return costA - a.cost + costB - b.cost;
  }

  /**
   * 2-opt*: u's route keeps its head up to u and takes v's route from v on; v's route keeps its head
   * before v and takes the rest of u's route. Only between interchangeable vehicles, and only when no
   * break would change vehicle.
   */
  twoOptStarDelta(u: number, v: number): number {
    const { solution } = this;
    const { instance } = solution;
    const a = solution.routes[solution.routeOf[u]!]!;
    const b = solution.routes[solution.routeOf[v]!]!;
    const i = solution.positionOf[u]!;
    const j = solution.positionOf[v]!;
    if (instance.vehicleClass[a.vehicle] !== instance.vehicleClass[b.vehicle]) return Infinity;
    if (i < lastBreakPosition(a) || j <= lastBreakPosition(b)) return Infinity;
    const breaksA = instance.breakNodes[a.vehicle]!.length;
    const breaksB = instance.breakNodes[b.vehicle]!.length;
    const tailA = a.nodes.length - 2 - i; // visits after u
    const tailB = b.nodes.length - 1 - j; // visits from v on
    const visitsA = i - breaksA + tailB;
    const visitsB = j - 1 - breaksB + tailA;
    const newA = this.joinedCost(a, i, b, j, visitsA, this.load);
    if (newA === Infinity) return Infinity;
    const newB = this.joinedCost(b, j - 1, a, i + 1, visitsB, this.otherLoad);
    if (newB === Infinity) return Infinity;
    return newA - a.cost + newB - b.cost;
  }

  tryRelocate(u: number, v: number): boolean {
    for (const after of [false, true]) {
      if (this.relocateDelta(u, v, after) < -IMPROVEMENT) {
        this.applyRelocate(u, v, after);
        return true;
      }
    }
    return false;
  }

  trySwap(u: number, v: number): boolean {
    if (this.swapDelta(u, v) >= -IMPROVEMENT) return false;
    this.applySwap(u, v);
    return true;
  }

  tryTwoOptStar(u: number, v: number): boolean {
    if (this.twoOptStarDelta(u, v) >= -IMPROVEMENT) return false;
    this.applyTwoOptStar(u, v);
    return true;
  }

  applyRelocate(u: number, v: number, after: boolean): void {
    const { solution } = this;
    solution.remove(u);
    solution.insert(u, solution.routeOf[v]!, solution.positionOf[v]! + (after ? 1 : 0), solution.window[u]!);
  }

  applySwap(u: number, v: number): void {
    const { solution } = this;
    const ra = solution.routeOf[u]!;
    const rb = solution.routeOf[v]!;
    const a = [...solution.routes[ra]!.nodes];
    const b = [...solution.routes[rb]!.nodes];
    a[solution.positionOf[u]!] = v;
    b[solution.positionOf[v]!] = u;
    solution.replaceNodes(ra, a);
    solution.replaceNodes(rb, b);
  }

  applyTwoOptStar(u: number, v: number): void {
    const { solution } = this;
    const ra = solution.routeOf[u]!;
    const rb = solution.routeOf[v]!;
    const a = solution.routes[ra]!.nodes;
    const b = solution.routes[rb]!.nodes;
    const i = solution.positionOf[u]!;
    const j = solution.positionOf[v]!;
    const newA = [...a.slice(0, i + 1), ...b.slice(j, -1), a[a.length - 1]!];
    const newB = [...b.slice(0, j), ...a.slice(i + 1, -1), b[b.length - 1]!];
    solution.replaceNodes(ra, newA);
    solution.replaceNodes(rb, newB);
  }

  /** Cost of route r with the visit at position p (`out`) replaced by visit `by`, or Infinity. */
  private replacedCost(route: Route, p: number, by: number, out: number): number {
    const { instance } = this.solution;
    const { dims, demand, capacity } = instance;
    const load = this.load;
    for (let d = 0; d < dims; d++) {
      load[d] = route.load[d]! - demand[out * dims + d]! + demand[by * dims + d]!;
      if (load[d]! > capacity[route.vehicle * dims + d]! + 1e-9) return Infinity;
      // With pairs on board: `by` rides instead of `out` up to position p.
      if (
        route.pairVisits > 0 &&
        route.fPeak[(p - 1) * dims + d]! - demand[out * dims + d]! + demand[by * dims + d]! > capacity[route.vehicle * dims + d]! + 1e-9
      ) {
        return Infinity;
      }
    }
    this.segment
      .setPrefix(route, p - 1)
      .append(by)
      .appendSuffix(route, p + 1);
    if (!this.segment.feasibleFor(route.vehicle)) return Infinity;
    return route.costOf(this.segment.distance, underload(route, load));
  }

  /**
   * `head`'s nodes 0..i followed by `tail`'s nodes j..end split no pair (no pair open after head's node i
   * or tail's node j − 1) and the on-board load fits everywhere: on the head part it is the head's own
   * profile shifted by the change of the ordinary load (now `load`), on the tail part the tail's own.
   */
  private keepsPairs(head: Route, i: number, tail: Route, j: number, load: Float64Array): boolean {
    if (head.fOpen[i]! !== 0 || tail.fOpen[j - 1]! !== 0) return false;
    if (head.pairVisits === 0 && tail.pairVisits === 0) return true;
    const { dims, capacity } = this.solution.instance;
    for (let d = 0; d < dims; d++) {
      const cap = capacity[head.vehicle * dims + d]! + 1e-9;
      if (head.fPeak[i * dims + d]! - head.load[d]! + load[d]! > cap || tail.bPeak[j * dims + d]! > cap) return false;
    }
    return true;
  }

  /** Cost of `head`'s nodes 0..i followed by `tail`'s nodes j..end, holding `visits` visits, or Infinity. */
  private joinedCost(head: Route, i: number, tail: Route, j: number, visits: number, load: Float64Array): number {
    const { instance } = this.solution;
    const { dims, capacity } = instance;
    for (let d = 0; d < dims; d++) {
      load[d] = head.fLoad[i * dims + d]! + tail.bLoad[j * dims + d]!;
      if (load[d]! > capacity[head.vehicle * dims + d]! + 1e-9) return Infinity;
    }
    if (instance.hasPairs && !this.keepsPairs(head, i, tail, j, load)) return Infinity;
    if (visits > instance.maxVisits[head.vehicle]!) return Infinity;
    if (visits === 0) return 0;
    this.segment.setPrefix(head, i).appendSuffix(tail, j);
    if (!this.segment.feasibleFor(head.vehicle)) return Infinity;
    return head.costOf(this.segment.distance, underload(head, load));
  }
}

function underload(route: Route, load: Float64Array): number {
  const { dims, minCapacity } = route.instance;
  let short = 0;
  for (let d = 0; d < dims; d++) short += Math.max(0, minCapacity[route.vehicle * dims + d]! - load[d]!);
  return short;
}

/** Position of the route's last break, 0 if it has none. */
function lastBreakPosition(route: Route): number {
  const { nodes, instance } = route;
  for (let i = nodes.length - 2; i > 0; i--) if (instance.isBreak[nodes[i]!]) return i;
  return 0;
}
