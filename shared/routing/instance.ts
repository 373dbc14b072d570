// The solver's internal, typed-array form of a problem. Nodes are visits (0..visitCount-1) followed by,
// per vehicle, its start, its end and its breaks; every node carries its location, service time,
// default time window and demand. Visits that can never be served are dropped here, with the reason.
import { greatCircleTravel } from "./matrix.ts";
import type { DropReason, Location, RoutingProblem, RoutingVehicle } from "./model.ts";

/** Breaks have no location of their own: they are taken where the vehicle is. */
export const NO_LOCATION = -1;
const DEFAULT_SPEED_KMH = 40;
const NEIGHBOUR_LIST_LENGTH = 100;
export const DEFAULT_PRIORITY = 3;
const MAX_PRIORITY = 5;

export interface Instance {
  readonly visitCount: number;
  readonly vehicleCount: number;
  readonly nodeCount: number;
  /** Capacity dimensions. */
  readonly dims: number;
  readonly locationCount: number;
  /** Row-major locationCount² distances. The last location is "nowhere", 0 from and to anything: the end of open routes. */
  readonly distance: Float64Array;
  /**
   * Whether distance[a][b] = distance[b][a] for every pair: then the insertion scan reads a position's distance
   * from the previous stop to the visit from the visit's own row, beside the one to the next stop (one read per
   * position from another row fewer; the previous-to-next edge is still read from its row).
   */
  readonly symmetricDistance: boolean;
  /** Whether every distance is finite (a road matrix may say Infinity): then every insertion cost is below an infinite bound. */
  readonly finiteDistance: boolean;
  /** Per vehicle, row-major travel minutes (shared between vehicles of the same speed). */
  readonly travelTime: Float64Array[];

  readonly location: Int32Array;
  readonly service: Float64Array;
  /** Default service start window per node (a visit's first window; the working time for starts and ends). */
  readonly open: Float64Array;
  readonly close: Float64Array;
  /** Visit v's windows are windowOpen/windowClose[windowOffset[v] .. windowOffset[v + 1]). */
  readonly windowOffset: Int32Array;
  readonly windowOpen: Float64Array;
  readonly windowClose: Float64Array;
  /** node * dims + d. */
  readonly demand: Float64Array;
  readonly isBreak: Uint8Array;

  readonly startNode: Int32Array;
  readonly endNode: Int32Array;
  readonly breakNodes: readonly (readonly number[])[];
  /** vehicle * dims + d; Infinity when unlimited. */
  readonly capacity: Float64Array;
  readonly minCapacity: Float64Array;
  readonly maxVisits: Float64Array;
  readonly maxDistance: Float64Array;
  readonly maxDuration: Float64Array;
  readonly fixedCost: Float64Array;
  /** Vehicles with equal attributes (apart from the id) share a class; their empty routes are interchangeable. */
  readonly vehicleClass: Int32Array;
  /** visit * vehicleCount + vehicle: tags, capacity and working time allow the pair. */
  readonly compatible: Uint8Array;

  /** Per visit, its priority 1–5 (default 3). */
  readonly priority: Uint8Array;
  /** Per visit, what leaving it out costs: (visitCount + 1)^(priority − 1), so one visit outweighs all of lower priorities. */
  readonly dropWeight: Float64Array;
  /** Some visits have a priority other than the default. */
  readonly hasPriorities: boolean;
  /** Per visit, the other visit of its pickup-and-delivery pair, -1 for ordinary visits. */
  readonly partner: Int32Array;
  /** Per visit, 1 for the pickup of a pair. */
  readonly isPickup: Uint8Array;
  /**
   * Per visit and dimension, the change of the load on board at a pair visit: +q at the pickup, −q at the
   * delivery (q = the pickup's demand); 0 for ordinary visits. Pair visits have no `demand` of their own
   * (that is what is loaded at the start), so plain summaries count ordinary visits only.
   */
  readonly pairLoad: Float64Array;
  /** Some visits are in pickup-and-delivery pairs. */
  readonly hasPairs: boolean;
  /** Visits the solver tries to route. */
  readonly routable: Int32Array;
  /** Visits dropped before solving. */
  readonly drops: ReadonlyMap<number, DropReason>;
  /** Per visit, the nearest routable visits: neighbours[v * neighbourCount + k]. */
  readonly neighbours: Int32Array;
  readonly neighbourCount: number;
}

export function buildInstance(problem: RoutingProblem): Instance {
  const { visits, vehicles } = problem;
  const travel = problem.travel ?? greatCircleTravel();
  const visitCount = visits.length;
  const vehicleCount = vehicles.length;
  const dims = [...visits.map((v) => v.demand), ...vehicles.map((k) => k.capacity), ...vehicles.map((k) => k.minCapacity)].reduce(
    (most, quantities) => Math.max(most, quantities?.length ?? 0),
    0,
  );

  // Locations: valid visit locations, then distinct vehicle start/end locations, then "nowhere".
  const locations: Location[] = [];
  const locationIndex = new Map<string, number>();
  const locate = (l: Location): number => {
    const key = `${l.lat},${l.lng}`;
    let index = locationIndex.get(key);
    if (index === undefined) {
      index = locations.length;
      locations.push(l);
      locationIndex.set(key, index);
    }
    return index;
  };
  const drops = new Map<number, DropReason>();
  const visitLocation = visits.map((visit, v) => {
    if (!travel.isValidLocation(visit.location)) {
      drops.set(v, "bad coordinates");
      return NO_LOCATION;
    }
    return locate(visit.location);
  });
  const vehicleLocations = vehicles.map((vehicle) => {
    const end = vehicle.end ?? vehicle.start;
    if (!travel.isValidLocation(vehicle.start) || !travel.isValidLocation(end)) {
      throw new RangeError(`vehicle ${vehicle.id} has an invalid start or end location`);
    }
    return { start: locate(vehicle.start), end: vehicle.returnToEnd === false ? -1 : locate(end) };
  });
  const nowhere = locations.length;
  const locationCount = nowhere + 1;
  const rawDistance = travel.distances(locations);
  const distance = withNowhere(rawDistance, nowhere);
  const timeBySpeed = new Map<number, Float64Array>();
  const travelTime = vehicles.map((vehicle) => {
    const speed = vehicle.speedKmh ?? DEFAULT_SPEED_KMH;
    let matrix = timeBySpeed.get(speed);
    if (!matrix) {
      matrix = withNowhere(travel.travelMinutes(rawDistance, speed, locations), nowhere);
      timeBySpeed.set(speed, matrix);
    }
    return matrix;
  });

  const breakCount = vehicles.reduce((sum, k) => sum + (k.breaks?.length ?? 0), 0);
  const nodeCount = visitCount + 2 * vehicleCount + breakCount;
  const location = new Int32Array(nodeCount);
  const service = new Float64Array(nodeCount);
  const open = new Float64Array(nodeCount);
  const close = new Float64Array(nodeCount);
  const demand = new Float64Array(nodeCount * dims);
  const isBreak = new Uint8Array(nodeCount);
  const windowOffset = new Int32Array(visitCount + 1);
  const windowOpen: number[] = [];
  const windowClose: number[] = [];

  visits.forEach((visit, v) => {
    location[v] = visitLocation[v]!;
    service[v] = Math.max(0, visit.visitTime ?? 0);
    visit.demand?.forEach((q, d) => {
      demand[v * dims + d] = q;
    });
    const windows = visit.timeWindows?.length ? visit.timeWindows : [{ start: -Infinity, end: Infinity }];
    for (const w of [...windows].sort((a, b) => a.start - b.start)) {
      windowOpen.push(w.start);
      windowClose.push(w.end);
    }
    windowOffset[v + 1] = windowOpen.length;
    open[v] = windowOpen[windowOffset[v]!]!;
    close[v] = windowClose[windowOffset[v]!]!;
  });

  const { partner, isPickup, pairLoad, hasPairs } = pairsOf(problem, dims, demand);

  const startNode = new Int32Array(vehicleCount);
  const endNode = new Int32Array(vehicleCount);
  const breakNodes: number[][] = [];
  const capacity = new Float64Array(vehicleCount * dims).fill(Infinity);
  const minCapacity = new Float64Array(vehicleCount * dims);
  const maxVisits = new Float64Array(vehicleCount);
  const maxDistance = new Float64Array(vehicleCount);
  const maxDuration = new Float64Array(vehicleCount);
  const fixedCost = new Float64Array(vehicleCount);
  const vehicleClass = new Int32Array(vehicleCount);
  const classIds = new Map<string, number>();
  let node = visitCount;
  vehicles.forEach((vehicle, k) => {
    const { start: shiftStart, end: shiftEnd } = vehicle.workingTime;
    startNode[k] = node;
    location[node] = vehicleLocations[k]!.start;
    open[node] = shiftStart;
    close[node] = shiftEnd;
    node++;
    endNode[k] = node;
    location[node] = vehicleLocations[k]!.end < 0 ? nowhere : vehicleLocations[k]!.end;
    open[node] = shiftStart;
    close[node] = shiftEnd;
    node++;
    const breaks: number[] = [];
    for (const b of vehicle.breaks ?? []) {
      location[node] = NO_LOCATION;
      isBreak[node] = 1;
      service[node] = b.duration;
      open[node] = b.earliestStart;
      close[node] = b.latestEnd - b.duration;
      breaks.push(node++);
    }
    breakNodes.push(breaks);
    vehicle.capacity?.forEach((q, d) => {
      capacity[k * dims + d] = q;
    });
    vehicle.minCapacity?.forEach((q, d) => {
      minCapacity[k * dims + d] = q;
    });
    maxVisits[k] = vehicle.maxVisits ?? Infinity;
    maxDistance[k] = vehicle.maxDistance ?? Infinity;
    maxDuration[k] = vehicle.maxDuration ?? Infinity;
    fixedCost[k] = vehicle.fixedCost ?? 1;
    const classKey = JSON.stringify({ ...vehicle, id: undefined, tags: [...(vehicle.tags ?? [])].sort() });
    if (!classIds.has(classKey)) classIds.set(classKey, classIds.size);
    vehicleClass[k] = classIds.get(classKey)!;
  });

  const compatible = new Uint8Array(visitCount * vehicleCount);
  const vehicleTags = vehicles.map((k) => new Set(k.tags ?? []));
  const routable: number[] = [];
  visits.forEach((visit, v) => {
    if (drops.has(v)) return;
    const tagged = vehicles.map((_, k) => (visit.requiredTags ?? []).every((t) => vehicleTags[k]!.has(t)));
    const loadable = tagged.map((ok, k) => ok && fitsCapacity(demand, v, capacity, k, dims));
    const workable = loadable.map((ok, k) => ok && fitsWorkingTime(windowOpen, windowClose, windowOffset, v, service[v]!, vehicles[k]!));
    const reason: DropReason | undefined = !tagged.includes(true)
      ? "no vehicle with matching tags"
      : !loadable.includes(true)
        ? "exceeds every vehicle's capacity"
        : !workable.includes(true)
          ? "outside every working time"
          : undefined;
    if (reason) {
      drops.set(v, reason);
      return;
    }
    workable.forEach((ok, k) => {
      compatible[v * vehicleCount + k] = ok ? 1 : 0;
    });
    routable.push(v);
  });
  if (hasPairs) {
    dropBrokenPairs(partner, compatible, vehicleCount, drops, routable);
    // From here on a pair visit's load is pairLoad: demand is what is loaded at the start.
    for (let v = 0; v < visitCount; v++) if (partner[v]! >= 0) for (let d = 0; d < dims; d++) demand[v * dims + d] = 0;
  }

  const priority = new Uint8Array(visitCount);
  const dropWeight = new Float64Array(visitCount);
  visits.forEach((visit, v) => {
    priority[v] = Math.min(MAX_PRIORITY, Math.max(1, Math.round(visit.priority ?? DEFAULT_PRIORITY)));
  });
  // A pair is served or dropped as a whole: both visits take the higher priority.
  if (hasPairs) for (let v = 0; v < visitCount; v++) if (partner[v]! >= 0) priority[v] = Math.max(priority[v]!, priority[partner[v]!]!);
  for (let v = 0; v < visitCount; v++) dropWeight[v] = (visitCount + 1) ** (priority[v]! - 1);
  const hasPriorities = priority.some((p) => p !== DEFAULT_PRIORITY);

  const neighbourCount = Math.min(NEIGHBOUR_LIST_LENGTH, Math.max(0, routable.length - 1));
  const neighbours = new Int32Array(visitCount * neighbourCount);
  const distanceTo = new Float64Array(visitCount);
  for (const v of routable) {
    const row = location[v]! * locationCount;
    const others = routable.filter((u) => u !== v);
    for (const u of others) distanceTo[u] = distance[row + location[u]!]! + distance[location[u]! * locationCount + location[v]!]!;
    others.sort((a, b) => distanceTo[a]! - distanceTo[b]!);
    for (let k = 0; k < neighbourCount; k++) neighbours[v * neighbourCount + k] = others[k]!;
  }

  return {
    visitCount,
    vehicleCount,
    nodeCount,
    dims,
    locationCount,
    distance,
    symmetricDistance: isSymmetric(distance, locationCount),
    finiteDistance: distance.every(Number.isFinite),
    travelTime,
    location,
    service,
    open,
    close,
    windowOffset,
    windowOpen: Float64Array.from(windowOpen),
    windowClose: Float64Array.from(windowClose),
    demand,
    isBreak,
    startNode,
    endNode,
    breakNodes,
    capacity,
    minCapacity,
    maxVisits,
    maxDistance,
    maxDuration,
    fixedCost,
    vehicleClass,
    compatible,
    priority,
    dropWeight,
    hasPriorities,
    partner,
    isPickup,
    pairLoad,
    hasPairs,
    routable: Int32Array.from(routable),
    drops,
    neighbours,
    neighbourCount,
  };
}

/** Copies an n×n matrix into (n+1)×(n+1), the extra row and column (the open-route end) being zero. */
function withNowhere(matrix: Float64Array, n: number): Float64Array {
  const out = new Float64Array((n + 1) * (n + 1));
  for (let i = 0; i < n; i++) out.set(matrix.subarray(i * n, (i + 1) * n), i * (n + 1));
  return out;
}

function fitsCapacity(demand: Float64Array, v: number, capacity: Float64Array, k: number, dims: number): boolean {
  for (let d = 0; d < dims; d++) if (demand[v * dims + d]! > capacity[k * dims + d]!) return false;
  return true;
}

/** Some window lets service start and finish inside the working time (travel aside). */
function fitsWorkingTime(
  windowOpen: number[],
  windowClose: number[],
  windowOffset: Int32Array,
  v: number,
  service: number,
  vehicle: RoutingVehicle,
): boolean {
  const { start, end } = vehicle.workingTime;
  for (let w = windowOffset[v]!; w < windowOffset[v + 1]!; w++) {
    const earliest = Math.max(windowOpen[w]!, start);
    if (earliest <= windowClose[w]! && earliest + service <= end) return true;
  }
  return false;
}

/**
 * Reads the pickup-and-delivery pairs (`pickupVisitId` on the delivery). Throws a RangeError for an
 * unknown pickup, a visit that is its own pickup, or a visit in two pairs. The pickup's demand becomes
 * the pair's load (+q at the pickup, −q at the delivery) and, for the capacity pre-check, the demand of
 * both visits; the caller clears it after that check.
 */
function pairsOf(problem: RoutingProblem, dims: number, demand: Float64Array) {
  const { visits } = problem;
  const partner = new Int32Array(visits.length).fill(-1);
  const isPickup = new Uint8Array(visits.length);
  const pairLoad = new Float64Array(visits.length * dims);
  const hasPairs = visits.some((visit) => visit.pickupVisitId !== undefined);
  if (!hasPairs) return { partner, isPickup, pairLoad, hasPairs };
  const indexOf = new Map(visits.map((visit, v) => [visit.id, v]));
  visits.forEach((visit, d) => {
    if (visit.pickupVisitId === undefined) return;
    const p = indexOf.get(visit.pickupVisitId);
    if (p === undefined) throw new RangeError(`visit ${visit.id} names an unknown pickup ${visit.pickupVisitId}`);
    if (p === d) throw new RangeError(`visit ${visit.id} names itself as its pickup`);
    if (partner[p]! >= 0 || partner[d]! >= 0)
      throw new RangeError(`visit ${visit.id} or its pickup ${visit.pickupVisitId} is in two pairs`);
    partner[p] = d;
    partner[d] = p;
    isPickup[p] = 1;
  });
  for (let v = 0; v < visits.length; v++) {
    if (partner[v]! < 0 || !isPickup[v]) continue;
    const d = partner[v]!;
    for (let k = 0; k < dims; k++) {
      pairLoad[v * dims + k] = demand[v * dims + k]!;
      pairLoad[d * dims + k] = -demand[v * dims + k]!;
      demand[d * dims + k] = demand[v * dims + k]!;
    }
  }
  return { partner, isPickup, pairLoad, hasPairs };
}

/** Both visits of a pair go on one vehicle: keep the vehicles both may use; drop both if either is dropped or none is left. */
function dropBrokenPairs(
  partner: Int32Array,
  compatible: Uint8Array,
  vehicleCount: number,
  drops: Map<number, DropReason>,
  routable: number[],
): void {
  for (const v of [...routable]) {
    const u = partner[v]!;
    if (u < 0 || u < v) continue;
    let common = 0;
    for (let k = 0; k < vehicleCount; k++) {
      const both = compatible[v * vehicleCount + k]! & compatible[u * vehicleCount + k]!;
      compatible[v * vehicleCount + k] = both;
      compatible[u * vehicleCount + k] = both;
      common += both;
    }
    if (common === 0) {
      if (!drops.has(v)) drops.set(v, "pickup and delivery cannot both be served");
      if (!drops.has(u)) drops.set(u, "pickup and delivery cannot both be served");
    }
  }
  for (let v = 0; v < partner.length; v++) {
    if (partner[v]! >= 0 && drops.has(partner[v]!) && !drops.has(v)) drops.set(v, "pickup and delivery cannot both be served");
  }
  const kept = routable.filter((v) => !drops.has(v));
  routable.length = 0;
  routable.push(...kept);
}

function isSymmetric(matrix: Float64Array, size: number): boolean {
  for (let a = 0; a < size; a++) {
    for (let b = a + 1; b < size; b++) if (matrix[a * size + b] !== matrix[b * size + a]) return false;
  }
  return true;
}
