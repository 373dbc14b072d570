// A solution under construction: one route per vehicle, the visits left out, and an undo journal so
// a rejected ruin-and-recreate step costs only the routes it touched.
import type { Instance } from "./instance.ts";
import { Route, type CostWeights, type Insertion, type NodeWindows } from "./route-state.ts";

export interface Snapshot {
  readonly routes: readonly (readonly number[])[];
  readonly window: Int32Array;
  readonly unassigned: readonly number[];
}

export class Solution {
  readonly routes: Route[];
  /** Route index per node, -1 if not routed. */
  readonly routeOf: Int32Array;
  readonly positionOf: Int32Array;
  /** Chosen window index per visit (into instance.windowOpen/windowClose). */
  readonly window: Int32Array;
  readonly windows: NodeWindows;
  unassigned = new Set<number>();
  /**
   * Per route, a stamp that changes whenever its nodes (or their windows) change and comes back with them on
   * rollback: equal stamps mean the same route, so what was infeasible in it still is (ruin-recreate.ts).
   */
  readonly version: Int32Array;

  private journalOpen = false;
  private lastVersion = 0;
  private savedRoutes = new Map<number, number[]>();
  /** Node arrays the journal is done with, reused for its next copies (a step allocates none in the steady state). */
  private spareNodes: number[][] = [];
  private savedVersions = new Map<number, number>();
  private savedWindows: number[] = [];
  private savedUnassigned: number[] = [];

  constructor(
    readonly instance: Instance,
    readonly weights: CostWeights,
  ) {
    this.routeOf = new Int32Array(instance.nodeCount).fill(-1);
    this.positionOf = new Int32Array(instance.nodeCount);
    this.window = new Int32Array(instance.visitCount);
    this.windows = { open: instance.open.slice(), close: instance.close.slice() };
    for (let v = 0; v < instance.visitCount; v++) this.window[v] = instance.windowOffset[v]!;
    this.routes = Array.from({ length: instance.vehicleCount }, (_, k) => new Route(instance, k, this.windows, weights));
    this.version = new Int32Array(instance.vehicleCount);
    for (let r = 0; r < this.routes.length; r++) this.version[r] = ++this.lastVersion;
    this.routes.forEach((_, r) => {
      this.index(r);
    });
    for (const v of instance.routable) this.unassigned.add(v);
  }

  /** Total of the routes' costs (fixed cost, distance, underload); unassigned visits are counted apart. */
  get cost(): number {
    let cost = 0;
    for (const route of this.routes) cost += route.cost;
    return cost;
  }

  /** Σ drop weight of the visits left out (their count when every visit has the default priority). */
  get droppedWeight(): number {
    let weight = 0;
    for (const v of this.unassigned) weight += this.instance.dropWeight[v]!;
    return weight;
  }

  get vehiclesUsed(): number {
    let used = 0;
    for (const route of this.routes) if (route.visitCount > 0) used++;
    return used;
  }

  /** Σ fixed cost of the vehicles used (the hierarchical objective's measure after served visits). */
  get fixedCostUsed(): number {
    let cost = 0;
    for (const route of this.routes) if (route.visitCount > 0) cost += this.instance.fixedCost[route.vehicle]!;
    return cost;
  }

  /** Starts recording changes so that `rollback` can undo them. */
  begin(): void {
    this.journalOpen = true;
    for (const nodes of this.savedRoutes.values()) this.recycle(nodes);
    this.savedRoutes.clear();
    this.savedVersions.clear();
    this.savedWindows.length = 0;
    this.savedUnassigned.length = 0;
    for (const v of this.unassigned) this.savedUnassigned.push(v);
  }

  commit(): void {
    this.journalOpen = false;
  }

  rollback(): void {
    this.journalOpen = false;
    for (let i = this.savedWindows.length - 2; i >= 0; i -= 2) this.setWindow(this.savedWindows[i]!, this.savedWindows[i + 1]!);
    for (const v of this.unassigned) this.routeOf[v] = -1;
    for (const r of this.savedRoutes.keys()) {
      for (const node of this.routes[r]!.nodes) this.routeOf[node] = -1;
    }
    for (const [r, nodes] of this.savedRoutes) {
      this.recycle(this.routes[r]!.nodes);
      this.routes[r]!.nodes = nodes;
      this.routes[r]!.update();
      this.index(r);
    }
    // Now the routes' own arrays: not to be recycled by the next `begin`.
    this.savedRoutes.clear();
    for (const [r, version] of this.savedVersions) this.version[r] = version;
    this.unassigned.clear();
    for (const v of this.savedUnassigned) this.unassigned.add(v);
    for (const v of this.unassigned) this.routeOf[v] = -1;
  }

  insert(v: number, r: number, position: number, window: number): void {
    this.touch(r);
    if (this.journalOpen) this.savedWindows.push(v, this.window[v]!);
    this.setWindow(v, window);
    this.routes[r]!.nodes.splice(position, 0, v);
    this.routes[r]!.inserted(position);
    this.index(r, position);
    this.unassigned.delete(v);
  }

  /** Inserts pickup p and its delivery as found by `Route.findPairInsertion`. */
  insertPair(p: number, r: number, insertion: Insertion): void {
    const q = this.instance.partner[p]!;
    this.touch(r);
    if (this.journalOpen) this.savedWindows.push(p, this.window[p]!, q, this.window[q]!);
    this.setWindow(p, insertion.window);
    this.setWindow(q, insertion.window2!);
    const nodes = this.routes[r]!.nodes;
    nodes.splice(insertion.position, 0, p);
    nodes.splice(insertion.position2!, 0, q);
    this.routes[r]!.update();
    this.index(r);
    this.unassigned.delete(p);
    this.unassigned.delete(q);
  }

  /** Removes visit v and, if it is in a pickup-and-delivery pair, its partner. */
  removeWithPartner(v: number): void {
    const u = this.instance.partner[v]!;
    this.remove(v);
    if (u >= 0 && this.routeOf[u]! >= 0) this.remove(u);
  }

  remove(v: number): void {
    const r = this.routeOf[v]!;
    const position = this.positionOf[v]!;
    this.touch(r);
    this.routes[r]!.nodes.splice(position, 1);
    this.routes[r]!.removed(position);
    this.index(r, position);
    this.routeOf[v] = -1;
    this.unassigned.add(v);
  }

  /** Removes the visits (none of a pickup-and-delivery pair), as `remove` one by one, summarising each route once. */
  removeAll(visits: readonly number[]): void {
    const touched: number[] = [];
    for (const v of visits) {
      const r = this.routeOf[v]!;
      this.touch(r);
      if (!touched.includes(r)) touched.push(r);
      this.routeOf[v] = -1;
      this.unassigned.add(v);
    }
    for (const r of touched) {
      const route = this.routes[r]!;
      // Start, end and breaks stay: every node still on route r is indexed to it. In place: the journal holds a copy.
      const nodes = route.nodes;
      const length = nodes.length;
      let kept = 0;
      let first = -1;
      let last = -1;
      for (let i = 0; i < length; i++) {
        if (this.routeOf[nodes[i]!] === r) nodes[kept++] = nodes[i]!;
        else {
          if (first < 0) first = i;
          last = i;
        }
      }
      nodes.length = kept;
      route.removedRange(first, last, length - kept);
      this.index(r, first);
    }
  }

  /**
   * Replaces route r's nodes wholesale (local-search moves exchanging nodes between routes, which
   * keep every node routed); windows stay as chosen.
   */
  replaceNodes(r: number, nodes: number[]): void {
    this.touch(r);
    this.routes[r]!.nodes = nodes;
    this.routes[r]!.update();
    this.index(r);
  }

  snapshot(): Snapshot {
    return { routes: this.routes.map((route) => [...route.nodes]), window: this.window.slice(), unassigned: [...this.unassigned] };
  }

  restore(snapshot: Snapshot): void {
    this.routeOf.fill(-1);
    for (let v = 0; v < this.instance.visitCount; v++) this.setWindow(v, snapshot.window[v]!);
    snapshot.routes.forEach((nodes, r) => {
      this.version[r] = ++this.lastVersion;
      this.routes[r]!.nodes = [...nodes];
      this.routes[r]!.update();
      this.index(r);
    });
    this.unassigned = new Set(snapshot.unassigned);
  }

  /** Keeps a node array no route or snapshot holds any more for the journal's next copy. */
  private recycle(nodes: number[]): void {
    if (this.spareNodes.length < 2 * this.routes.length) this.spareNodes.push(nodes);
  }

  private setWindow(v: number, window: number): void {
    this.window[v] = window;
    this.windows.open[v] = this.instance.windowOpen[window]!;
    this.windows.close[v] = this.instance.windowClose[window]!;
  }

  private touch(r: number): void {
    if (this.journalOpen && !this.savedRoutes.has(r)) {
      const copy = this.spareNodes.pop() ?? [];
      const nodes = this.routes[r]!.nodes;
      // Emptied and refilled with push: setting a longer length would make the array holey, and every read slower.
      copy.length = 0;
      for (let i = 0; i < nodes.length; i++) copy.push(nodes[i]!);
      this.savedRoutes.set(r, copy);
      this.savedVersions.set(r, this.version[r]!);
    }
    this.version[r] = ++this.lastVersion;
  }

  /** Route index and position of route r's nodes from position `from` on. */
  private index(r: number, from = 0): void {
    const nodes = this.routes[r]!.nodes;
    for (let i = from; i < nodes.length; i++) {
      this.routeOf[nodes[i]!] = r;
      this.positionOf[nodes[i]!] = i;
    }
  }
}
