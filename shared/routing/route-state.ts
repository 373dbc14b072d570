// A route and its segment summaries. Every prefix (start..i) and suffix (i..end) of a route is
// summarised by its minimum duration, time warp, earliest and latest start (Vidal et al. 2013), distance
// and load, so a move that rebuilds routes from a prefix, a few nodes and a suffix is checked in O(1).
//
// Breaks have no location: they are taken where the vehicle is, so the travel after a break starts from
// the last real location before it. A suffix that starts with breaks therefore keeps them apart
// ("leading breaks", bNext) until the location before them is known.
import { NO_LOCATION, type Instance } from "./instance.ts";
import type { Blinks } from "./random.ts";

/** Slack for floating-point sums; the independent checker allows 1e-6. */
export const EPSILON = 1e-9;
/**
 * `findPairInsertion` skips a position whose cost, summed from the distance matrix, exceeds the bound by more than
 * this share: the trial's exact cost is summed another way (segment by segment), so only a clear miss is skipped.
 */
const PAIR_BOUND_TOLERANCE = 1e-9;
const clearlyAbove = (cost: number, bound: number) => cost - bound > PAIR_BOUND_TOLERANCE * Math.max(1, Math.abs(bound));

/** Service start windows in force: a visit's chosen window, the instance default for other nodes. */
export interface NodeWindows {
  readonly open: Float64Array;
  readonly close: Float64Array;
}

/** What one used vehicle and one unit of underload cost, in distance units. */
export interface CostWeights {
  /** Per unit of `fixedCost`; 0 under the distance objective. */
  readonly vehicle: number;
  readonly underload: number;
}

/** Accumulates a concatenation of route pieces, left to right. */
export class Segment {
  duration = 0;
  timeWarp = 0;
  earliest = 0;
  latest = 0;
  distance = 0;
  /** Last real location, where the next travel starts. */
  last = 0;
  private time: Float64Array;

  constructor(
    private readonly instance: Instance,
    private readonly windows: NodeWindows,
  ) {
    this.time = instance.distance;
  }

  /** A segment made of one node served in [open, close], for a route driven with the given times. */
  startAt(route: Route, node: number, open: number, close: number): this {
    this.time = route.time;
    this.duration = this.instance.service[node]!;
    this.timeWarp = 0;
    this.earliest = open;
    this.latest = close;
    this.distance = 0;
    this.last = this.instance.location[node]!;
    return this;
  }

  /** Takes over another segment's summary (both must belong to the same instance and windows). */
  copyFrom(other: Segment): this {
    this.time = other.time;
    this.duration = other.duration;
    this.timeWarp = other.timeWarp;
    this.earliest = other.earliest;
    this.latest = other.latest;
    this.distance = other.distance;
    this.last = other.last;
    return this;
  }

  /** The route's nodes 0..i. */
  setPrefix(route: Route, i: number): this {
    this.time = route.time;
    this.duration = route.fDuration[i]!;
    this.timeWarp = route.fTimeWarp[i]!;
    this.earliest = route.fEarliest[i]!;
    this.latest = route.fLatest[i]!;
    this.distance = route.fDistance[i]!;
    this.last = route.fLast[i]!;
    return this;
  }

  appendNode(node: number, open: number, close: number): this {
    const location = this.instance.location[node]!;
    if (location === NO_LOCATION) {
      this.join(0, this.instance.service[node]!, 0, open, close);
    } else {
      const leg = this.last * this.instance.locationCount + location;
      this.join(this.time[leg]!, this.instance.service[node]!, 0, open, close);
      this.distance += this.instance.distance[leg]!;
      this.last = location;
    }
    return this;
  }

  /** Appends a node with its window in force. */
  append(node: number): this {
    return this.appendNode(node, this.windows.open[node]!, this.windows.close[node]!);
  }

  /** The route's nodes j..end. */
  appendSuffix(route: Route, j: number): this {
    const k = route.bNext[j]!;
    if (k !== j) this.join(0, route.bDuration[j]!, route.bTimeWarp[j]!, route.bEarliest[j]!, route.bLatest[j]!);
    const leg = this.last * this.instance.locationCount + this.instance.location[route.nodes[k]!]!;
    this.join(this.time[leg]!, route.bDuration[k]!, route.bTimeWarp[k]!, route.bEarliest[k]!, route.bLatest[k]!);
    this.distance += this.instance.distance[leg]! + route.bDistance[k]!;
    this.last = route.endLocation;
    return this;
  }

  /** Appends a summarised segment after `travel` minutes (Vidal's concatenation). */
  join(travel: number, duration: number, timeWarp: number, earliest: number, latest: number): void {
    const delta = this.duration - this.timeWarp + travel;
    const extraWait = Math.max(earliest - delta - this.latest, 0);
    const extraWarp = Math.max(this.earliest + delta - latest, 0);
    this.earliest = Math.max(earliest - delta, this.earliest) - extraWait;
    this.latest = Math.min(latest - delta, this.latest) + extraWarp;
    this.duration += duration + travel + extraWait;
    this.timeWarp += timeWarp + extraWarp;
  }

  /** Time windows, working time, maximum distance and duration hold for a route of `vehicle`. */
  feasibleFor(vehicle: number): boolean {
    return (
      this.timeWarp <= EPSILON &&
      this.distance <= this.instance.maxDistance[vehicle]! + EPSILON &&
      this.duration <= this.instance.maxDuration[vehicle]! + EPSILON
    );
  }
}

/** The best insertion found by `Route.findInsertion` (and, for a pair, `findPairInsertion`). */
export interface Insertion {
  cost: number;
  /** Index the visit (a pair's pickup) takes in the route's nodes. */
  position: number;
  window: number;
  /** A pair's delivery: its index in the nodes once the pickup is in, and its window. */
  position2?: number;
  window2?: number;
  /** Set by `findInsertion`: whether a blink skipped a position (so a failure is not proof that none fits). */
  blinked?: boolean;
}

export class Route {
  /** Start node, visits and breaks in order, end node. */
  nodes: number[];
  visitCount = 0;
  /** Distance driven; 0 for an unused vehicle. */
  distance = 0;
  underload = 0;
  /** Contribution to the objective: fixed cost, distance and underload; 0 for an unused vehicle. */
  cost = 0;
  readonly load: Float64Array;
  readonly time: Float64Array;
  readonly endLocation: number;

  fDuration = new Float64Array(0);
  fTimeWarp = new Float64Array(0);
  fEarliest = new Float64Array(0);
  fLatest = new Float64Array(0);
  fDistance = new Float64Array(0);
  fLast = new Int32Array(0);
  /** Load of nodes 0..i: fLoad[i * dims + d]. */
  fLoad = new Float64Array(0);
  bDuration = new Float64Array(0);
  bTimeWarp = new Float64Array(0);
  bEarliest = new Float64Array(0);
  bLatest = new Float64Array(0);
  bDistance = new Float64Array(0);
  /** First real node at or after i; at a break, b* above summarise only the breaks i..bNext[i]-1. */
  bNext = new Int32Array(0);
  /** Location of the first real node after node i (the one an insertion after i drives on to). */
  nextLocation = new Int32Array(0);
  bLoad = new Float64Array(0);
  /**
   * Only with pickup-and-delivery pairs (else left empty): visits of pairs on the route; load on board
   * when leaving node i (ordinary visits still to serve + pairs picked up and not yet delivered) and its
   * prefix and suffix maxima, per dimension (i * dims + d); pairs picked up and not yet delivered after node i.
   */
  pairVisits = 0;
  onBoard = new Float64Array(0);
  fPeak = new Float64Array(0);
  bPeak = new Float64Array(0);
  fOpen = new Int32Array(0);
  /** `findPairInsertion`'s scratch: the delivery's detour when inserted after node j, and the least of those from j on. */
  private deliveryDetour = new Float64Array(0);
  private leastDeliveryDetour = new Float64Array(0);

  private readonly carried: Float64Array;
  private readonly segment: Segment;
  private readonly pairSegment: Segment;
  private readonly trial: Segment;

  constructor(
    readonly instance: Instance,
    readonly vehicle: number,
    readonly windows: NodeWindows,
    readonly weights: CostWeights,
  ) {
    this.nodes = [instance.startNode[vehicle]!, ...instance.breakNodes[vehicle]!, instance.endNode[vehicle]!];
    this.load = new Float64Array(instance.dims);
    this.time = instance.travelTime[vehicle]!;
    this.endLocation = instance.location[instance.endNode[vehicle]!]!;
    this.segment = new Segment(instance, windows);
    this.pairSegment = new Segment(instance, windows);
    this.carried = new Float64Array(instance.dims);
    this.trial = new Segment(instance, windows);
    this.update();
  }

  /** Recomputes the summaries after `nodes` changed. */
  update(): void {
    const n = this.nodes.length;
    if (this.fDuration.length < n) this.grow(Math.max(n, 2 * this.fDuration.length));
    let visits = 0;
    for (let i = 0; i < n; i++) if (this.nodes[i]! < this.instance.visitCount) visits++;
    this.summarise(0, n - 1, visits);
  }

  /**
   * After `nodes.splice(p, 0, visit)`: the prefixes before p and the suffixes after it are unchanged (the
   * latter move up one place), so only prefixes from p on and suffixes up to p are computed again.
   */
  inserted(p: number): void {
    const n = this.nodes.length;
    if (this.fDuration.length < n) {
      this.update();
      return;
    }
    this.shiftSuffixes(p, n - 1, 1);
    this.summarise(p, p, this.visitCount + 1);
  }

  /** After `nodes.splice(p, 1)` of a visit: as `inserted`, the suffixes from p on move down one place. */
  removed(p: number): void {
    this.shiftSuffixes(p + 1, this.nodes.length + 1, -1);
    this.summarise(p, p - 1, this.visitCount - 1);
  }

  /**
   * After `count` visits between old positions `first` and `last` (both removed) left the route: the prefixes
   * before `first` and the suffixes after `last` are unchanged (the latter move down `count` places), so only the
   * prefixes from `first` on and the suffixes up to the kept nodes between them are computed again.
   */
  removedRange(first: number, last: number, count: number): void {
    this.shiftSuffixes(last + 1, this.nodes.length + count, -count);
    this.summarise(first, last - count, this.visitCount - count);
  }

  /** Moves the suffix summaries of old positions [from, to) by `by` places (their bNext with them). */
  private shiftSuffixes(from: number, to: number, by: number): void {
    const dims = this.instance.dims;
    const target = from + by;
    this.bDuration.copyWithin(target, from, to);
    this.bTimeWarp.copyWithin(target, from, to);
    this.bEarliest.copyWithin(target, from, to);
    this.bLatest.copyWithin(target, from, to);
    this.bDistance.copyWithin(target, from, to);
    this.nextLocation.copyWithin(target, from, to);
    this.bLoad.copyWithin(target * dims, from * dims, to * dims);
    const bNext = this.bNext;
    bNext.copyWithin(target, from, to);
    for (let i = target; i < to + by; i++) bNext[i] = bNext[i]! + by;
  }

  /** Prefix summaries from `forwardFrom` to the end, suffix summaries from `backwardFrom` down to 0, then the totals. */
  private summarise(forwardFrom: number, backwardFrom: number, visits: number): void {
    const { instance, nodes, windows, segment } = this;
    const { dims, demand, isBreak } = instance;
    const n = nodes.length;
    if (forwardFrom === 0) segment.startAt(this, nodes[0]!, windows.open[nodes[0]!]!, windows.close[nodes[0]!]!);
    else segment.setPrefix(this, forwardFrom - 1);
    for (let i = forwardFrom; i < n; i++) {
      const node = nodes[i]!;
      if (i > 0) segment.append(node);
      this.fDuration[i] = segment.duration;
      this.fTimeWarp[i] = segment.timeWarp;
      this.fEarliest[i] = segment.earliest;
      this.fLatest[i] = segment.latest;
      this.fDistance[i] = segment.distance;
      this.fLast[i] = segment.last;
      for (let d = 0; d < dims; d++) {
        this.fLoad[i * dims + d] = (i > 0 ? this.fLoad[(i - 1) * dims + d]! : 0) + demand[node * dims + d]!;
      }
    }
    for (let i = backwardFrom; i >= 0; i--) {
      const node = nodes[i]!;
      segment.startAt(this, node, windows.open[node]!, windows.close[node]!);
      if (isBreak[node]) {
        // A run of leading breaks is summarised on its own (breaks follow each other with no travel) and
        // joined to what follows once the location before it is known.
        const next = i + 1;
        if (isBreak[nodes[next]!]) {
          segment.join(0, this.bDuration[next]!, this.bTimeWarp[next]!, this.bEarliest[next]!, this.bLatest[next]!);
          this.bNext[i] = this.bNext[next]!;
        } else {
          this.bNext[i] = next;
        }
        this.bDistance[i] = this.bDistance[this.bNext[i]!]!;
      } else {
        if (i < n - 1) segment.appendSuffix(this, i + 1);
        this.bNext[i] = i;
        this.bDistance[i] = segment.distance;
      }
      this.bDuration[i] = segment.duration;
      this.bTimeWarp[i] = segment.timeWarp;
      this.bEarliest[i] = segment.earliest;
      this.bLatest[i] = segment.latest;
      for (let d = 0; d < dims; d++) {
        this.bLoad[i * dims + d] = (i < n - 1 ? this.bLoad[(i + 1) * dims + d]! : 0) + demand[node * dims + d]!;
      }
    }
    for (let i = Math.min(backwardFrom, n - 2); i >= 0; i--) this.nextLocation[i] = instance.location[nodes[this.bNext[i + 1]!]!]!;
    this.visitCount = visits;
    for (let d = 0; d < dims; d++) this.load[d] = this.fLoad[(n - 1) * dims + d]!;
    if (instance.hasPairs) this.updatePairs();
    this.distance = visits > 0 ? this.fDistance[n - 1]! : 0;
    this.underload = visits > 0 ? this.underloadWith(-1) : 0;
    this.cost = visits > 0 ? this.costOf(this.distance, this.underload) : 0;
  }

  /** Whole route summary: feasible when time warp is nil and the vehicle's limits hold. */
  get feasible(): boolean {
    const last = this.nodes.length - 1;
    return (
      this.fTimeWarp[last]! <= EPSILON &&
      this.fDistance[last]! <= this.instance.maxDistance[this.vehicle]! + EPSILON &&
      this.fDuration[last]! <= this.instance.maxDuration[this.vehicle]! + EPSILON &&
      this.visitCount <= this.instance.maxVisits[this.vehicle]! &&
      this.fitsLoad(-1, 1) &&
      (this.pairVisits === 0 || this.peakFits(this.fPeak, this.nodes.length - 1, -1, 0))
    );
  }

  /** The on-board profile: `update` for routes of instances with pairs. */
  private updatePairs(): void {
    const { instance, nodes } = this;
    const { dims, pairLoad, partner, isPickup, visitCount } = instance;
    const n = nodes.length;
    let pairVisits = 0;
    let open = 0;
    const carried = this.carried.fill(0);
    for (let i = 0; i < n; i++) {
      const node = nodes[i]!;
      const paired = node < visitCount && partner[node]! >= 0;
      if (paired) {
        pairVisits++;
        open += isPickup[node] ? 1 : -1;
        for (let d = 0; d < dims; d++) carried[d] = carried[d]! + pairLoad[node * dims + d]!;
      }
      this.fOpen[i] = open;
      for (let d = 0; d < dims; d++) {
        const at = i * dims + d;
        // Ordinary demand not yet served (fLoad counts ordinary visits only) plus the pairs on board.
        this.onBoard[at] = this.load[d]! - this.fLoad[at]! + (open > 0 ? carried[d]! : 0);
        this.fPeak[at] = i > 0 ? Math.max(this.fPeak[at - dims]!, this.onBoard[at]!) : this.onBoard[at]!;
      }
    }
    for (let i = n - 1; i >= 0; i--) {
      for (let d = 0; d < dims; d++) {
        const at = i * dims + d;
        this.bPeak[at] = i < n - 1 ? Math.max(this.bPeak[at + dims]!, this.onBoard[at]!) : this.onBoard[at]!;
      }
    }
    this.pairVisits = pairVisits;
  }

  /** Capacity holds for the on-board peak `peaks[i]` (fPeak or bPeak) changed by `sign` × visit v's demand (v = -1: unchanged). */
  peakFits(peaks: Float64Array, i: number, v: number, sign: number): boolean {
    const { dims, capacity, demand } = this.instance;
    for (let d = 0; d < dims; d++) {
      const peak = peaks[i * dims + d]! + (v >= 0 ? sign * demand[v * dims + d]! : 0);
      if (peak > capacity[this.vehicle * dims + d]! + EPSILON) return false;
    }
    return true;
  }

  /** The objective contribution of this vehicle used with this distance and underload. */
  costOf(distance: number, underload: number): number {
    return this.weights.vehicle * this.instance.fixedCost[this.vehicle]! + distance + this.weights.underload * underload;
  }

  /** Underload after adding visit v's demand (v = -1: as is). */
  underloadWith(v: number, sign = 1): number {
    const { dims, minCapacity, demand } = this.instance;
    let short = 0;
    for (let d = 0; d < dims; d++) {
      const load = this.load[d]! + (v >= 0 ? sign * demand[v * dims + d]! : 0);
      short += Math.max(0, minCapacity[this.vehicle * dims + d]! - load);
    }
    return short;
  }

  /** Capacity holds after adding (sign 1) or removing (sign -1) visit v's demand (v = -1: as is). */
  fitsLoad(v: number, sign: number): boolean {
    const { dims, capacity, demand } = this.instance;
    for (let d = 0; d < dims; d++) {
      const load = this.load[d]! + (v >= 0 ? sign * demand[v * dims + d]! : 0);
      if (load > capacity[this.vehicle * dims + d]! + EPSILON) return false;
    }
    return true;
  }

  /**
   * Cheapest feasible insertion of visit v costing less than `bound`, trying each of its windows;
   * positions cheaper than the bound are skipped at random by `blinks` (SISR's). Returns false if none.
   */
  findInsertion(v: number, bound: number, blinks: Blinks | undefined, out: Insertion): boolean {
    const { instance, nodes, segment } = this;
    out.blinked = false;
    if (this.visitCount + 1 > instance.maxVisits[this.vehicle]! || !this.fitsLoad(v, 1)) return false;
    const { distance, location, locationCount, windowOffset, windowOpen, windowClose, service } = instance;
    const symmetric = instance.symmetricDistance;
    const time = this.time;
    const serviceTime = service[v]!;
    // An unused vehicle's route (start, breaks, end) is not charged until it serves a visit.
    const fixed = this.costOf(this.visitCount > 0 ? this.distance : this.fDistance[nodes.length - 1]!, this.underloadWith(v)) - this.cost;
    const at = location[v]! * locationCount;
    const visitLocation = location[v]!;
    // The hottest loop of the search: the route's summaries in locals (a call below, random(), would
    // otherwise make every field be read again).
    const { fLast, nextLocation, fEarliest, fDuration, fTimeWarp, bLatest, bNext } = this;
    const last = nodes.length - 1;
    // Positions no window of v can take whatever the travel (v's service cannot start before its first window
    // opens nor leave room for what follows; the route before it cannot be done by its last window's close) are
    // not checked, only costed where a blink would be drawn for them: the same blinks, the same answer.
    const firstWindow = windowOffset[v]!;
    const lastWindow = windowOffset[v + 1]! - 1;
    let latestClose = windowClose[firstWindow]!;
    for (let w = firstWindow + 1; w <= lastWindow; w++) latestClose = Math.max(latestClose, windowClose[w]!);
    let earliestOpen = windowOpen[firstWindow]!;
    for (let w = firstWindow + 1; w <= lastWindow; w++) earliestOpen = Math.min(earliestOpen, windowOpen[w]!);
    const earliestDone = earliestOpen + serviceTime;
    const tooLate = latestClose + EPSILON;
    let from = 0;
    while (from < last && earliestDone > bLatest[bNext[from + 1]!]! + EPSILON) from++;
    let to = last;
    while (to > from && fEarliest[to - 1]! + fDuration[to - 1]! - fTimeWarp[to - 1]! > tooLate) to--;
    if (blinks !== undefined) {
      if (from > 0 && this.skipDead(0, from, v, fixed, bound, blinks)) out.blinked = true;
    }
    let found = false;
    for (let p = from; p < to; p++) {
      const prev = fLast[p]!;
      const next = nextLocation[p]!;
      const fromPrev = prev * locationCount;
      const toVisit = symmetric ? distance[at + prev]! : distance[fromPrev + visitLocation]!;
      const cost = fixed + toVisit + distance[at + next]! - distance[fromPrev + next]!;
      if (cost >= bound) continue;
      if (blinks?.skip()) {
        out.blinked = true;
        continue;
      }
      // With pairs on board, v's demand rides along up to v: the peak before it must leave room.
      if (this.pairVisits > 0 && !this.peakFits(this.fPeak, p, v, 1)) continue;
      // Quick necessary conditions before the exact concatenation: reach v in time, then the next node.
      const ready = fEarliest[p]! + fDuration[p]! - fTimeWarp[p]! + time[fromPrev + visitLocation]!;
      const nextLatest = bLatest[bNext[p + 1]!]! + EPSILON;
      for (let w = windowOffset[v]!; w < windowOffset[v + 1]!; w++) {
        const start = Math.max(ready, windowOpen[w]!);
        if (start > windowClose[w]! + EPSILON || start + serviceTime + time[at + next]! > nextLatest) continue;
        segment
          .setPrefix(this, p)
          .appendNode(v, windowOpen[w]!, windowClose[w]!)
          .appendSuffix(this, p + 1);
        if (segment.feasibleFor(this.vehicle)) {
          bound = cost;
          out.cost = cost;
          out.position = p + 1;
          out.window = w;
          found = true;
          break;
        }
      }
    }
    if (blinks !== undefined && to < last && this.skipDead(to, last, v, fixed, bound, blinks)) out.blinked = true;
    return found;
  }

  /**
   * The blinks that `findInsertion` would draw for positions [from, to), none of which v fits: one per position
   * cheaper than the bound (which none of them can lower). Whether any was skipped.
   */
  private skipDead(from: number, to: number, v: number, fixed: number, bound: number, blinks: Blinks): boolean {
    if (bound === Infinity && this.instance.finiteDistance) return blinks.skipMany(to - from);
    const { distance, location, locationCount } = this.instance;
    const symmetric = this.instance.symmetricDistance;
    const visitLocation = location[v]!;
    const at = visitLocation * locationCount;
    const { fLast, nextLocation } = this;
    let cheaper = 0;
    for (let p = from; p < to; p++) {
      const prev = fLast[p]!;
      const next = nextLocation[p]!;
      const fromPrev = prev * locationCount;
      const toVisit = symmetric ? distance[at + prev]! : distance[fromPrev + visitLocation]!;
      const cost = fixed + toVisit + distance[at + next]! - distance[fromPrev + next]!;
      if (cost < bound) cheaper++;
    }
    return blinks.skipMany(cheaper);
  }

  /**
   * Cheapest feasible insertion of the pair (pickup p, delivery q = its partner) costing less than
   * `bound`: p after node i and q after node j ≥ i, over every pair of positions and windows (O(n²)
   * concatenations, cut short once the part before q has time warp). The pair's load rides from p to q,
   * so the on-board peak over nodes i..j plus that load must fit. Blinks skip pickup positions.
   *
   * Positions that cannot beat the bound are not concatenated: the pair's added distance, p after node i and
   * q after node j, is p's detour there plus q's detour after node j in the route as it is, or, with no
   * location between them, the detour through both; a pickup position whose best case (q's least detour from
   * i + 1 on, one suffix minimum per call) misses the bound is skipped whole, a row of delivery positions ends
   * where the least of the rest misses it, and a delivery position whose own cost misses it is not tried. All
   * three are exact (rounding apart), so the answer is the one the full search gives; the blinks are drawn as
   * they were.
   */
  findPairInsertion(p: number, bound: number, blinks: Blinks | undefined, out: Insertion): boolean {
    const { instance, nodes, pairSegment, trial } = this;
    const q = instance.partner[p]!;
    if (this.visitCount + 2 > instance.maxVisits[this.vehicle]!) return false;
    const { dims, windowOffset, windowOpen, windowClose, pairLoad, capacity } = instance;
    const base = this.visitCount > 0 ? this.cost : 0;
    const underload = this.visitCount > 0 ? this.underload : this.underloadWith(-1);
    const peak = this.carried;
    const n = nodes.length;
    const { distance, location, locationCount, isBreak } = instance;
    const { fLast, nextLocation } = this;
    const pickupAt = location[p]!;
    const deliveryAt = location[q]!;
    const { deliveryDetour, leastDeliveryDetour: least } = this;
    least[n - 1] = Infinity;
    for (let j = n - 2; j >= 0; j--) {
      const from = fLast[j]! * locationCount;
      const to = nextLocation[j]!;
      deliveryDetour[j] = distance[from + deliveryAt]! + distance[deliveryAt * locationCount + to]! - distance[from + to]!;
      least[j] = Math.min(least[j + 1]!, deliveryDetour[j]!);
    }
    // The route's cost with the pair but no detour yet (an unused vehicle's is charged from its first visit).
    const fixed = this.costOf(this.visitCount > 0 ? this.distance : this.fDistance[n - 1]!, underload) - base;
    let found = false;
    for (let i = 0; i < n - 1; i++) {
      if (blinks?.skip()) continue;
      const from = fLast[i]! * locationCount;
      const to = nextLocation[i]!;
      const toPickup = distance[from + pickupAt]! - distance[from + to]!;
      const pickupDetour = toPickup + distance[pickupAt * locationCount + to]!;
      const throughBoth = toPickup + distance[pickupAt * locationCount + deliveryAt]! + distance[deliveryAt * locationCount + to]!;
      if (clearlyAbove(fixed + Math.min(throughBoth, pickupDetour + least[i + 1]!), bound)) continue;
      for (let wp = windowOffset[p]!; wp < windowOffset[p + 1]!; wp++) {
        pairSegment.setPrefix(this, i).appendNode(p, windowOpen[wp]!, windowClose[wp]!);
        if (pairSegment.timeWarp > EPSILON) continue;
        for (let d = 0; d < dims; d++) peak[d] = -Infinity;
        // Whether a location lies between p and q (else q's detour is the one through both).
        let apart = false;
        for (let j = i; j < n - 1; j++) {
          if (j > i) {
            if (isBreak[nodes[j]!] === 0) apart = true;
            // No delivery position from here on can beat the bound: the rest of the row is not concatenated.
            if (apart && clearlyAbove(fixed + pickupDetour + least[j]!, bound)) break;
            pairSegment.append(nodes[j]!);
          }
          if (pairSegment.timeWarp > EPSILON) break;
          let fits = true;
          for (let d = 0; d < dims; d++) {
            peak[d] = Math.max(peak[d]!, this.onBoard[j * dims + d]!);
            if (peak[d]! + pairLoad[p * dims + d]! > capacity[this.vehicle * dims + d]! + EPSILON) fits = false;
          }
          if (!fits) break;
          if (clearlyAbove(fixed + (apart ? pickupDetour + deliveryDetour[j]! : throughBoth), bound)) continue;
          for (let wq = windowOffset[q]!; wq < windowOffset[q + 1]!; wq++) {
            trial
              .copyFrom(pairSegment)
              .appendNode(q, windowOpen[wq]!, windowClose[wq]!)
              .appendSuffix(this, j + 1);
            if (!trial.feasibleFor(this.vehicle)) continue;
            const cost = this.costOf(trial.distance, underload) - base;
            if (cost >= bound) continue;
            bound = cost;
            out.cost = cost;
            out.position = i + 1;
            out.window = wp;
            out.position2 = j + 2;
            out.window2 = wq;
            found = true;
          }
        }
      }
    }
    return found;
  }

  /** Cost change of removing the visit at position i, or Infinity if the rest becomes infeasible. */
  removalDelta(i: number): number {
    const { nodes, segment } = this;
    const v = nodes[i]!;
    if (this.visitCount === 1) return -this.cost;
    segment.setPrefix(this, i - 1).appendSuffix(this, i + 1);
    if (!segment.feasibleFor(this.vehicle)) return Infinity;
    return this.costOf(segment.distance, this.underloadWith(v, -1)) - this.cost;
  }

  private grow(size: number): void {
    const dims = this.instance.dims;
    this.fDuration = new Float64Array(size);
    this.fTimeWarp = new Float64Array(size);
    this.fEarliest = new Float64Array(size);
    this.fLatest = new Float64Array(size);
    this.fDistance = new Float64Array(size);
    this.fLast = new Int32Array(size);
    this.fLoad = new Float64Array(size * dims);
    this.bDuration = new Float64Array(size);
    this.bTimeWarp = new Float64Array(size);
    this.bEarliest = new Float64Array(size);
    this.bLatest = new Float64Array(size);
    this.bDistance = new Float64Array(size);
    this.bNext = new Int32Array(size);
    this.nextLocation = new Int32Array(size);
    this.bLoad = new Float64Array(size * dims);
    if (this.instance.hasPairs) {
      this.onBoard = new Float64Array(size * dims);
      this.fPeak = new Float64Array(size * dims);
      this.bPeak = new Float64Array(size * dims);
      this.fOpen = new Int32Array(size);
      this.deliveryDetour = new Float64Array(size);
      this.leastDeliveryDetour = new Float64Array(size);
    }
  }
}
