// Public model of the route optimizer. Everything here is plain data so callers can build it from
// stored records and serialise the result as it is.
//
// Units: times are minutes relative to a planning origin the caller chooses (wall-clock and multi-day
// working times are converted by the caller); distances are whatever the travel provider returns —
// metres for the default great-circle provider.

/** Minutes since the caller's planning origin. */
export type Minutes = number;

/** A point. The default provider reads it as WGS84 degrees; the Euclidean one as planar x = lng, y = lat. */
export interface Location {
  lat: number;
  lng: number;
}

/** Service at a visit must start inside [start, end]; a visit with several windows needs to meet one. */
export interface TimeWindow {
  start: Minutes;
  end: Minutes;
}

export interface RoutingVisit {
  /** Caller id, returned in the solution. */
  id: string;
  location: Location;
  /** Service duration at the visit. Default 0. */
  visitTime?: Minutes;
  /** Allowed service start windows. Default: any time within the vehicle's working time. */
  timeWindows?: TimeWindow[];
  /** Demand per capacity dimension (e.g. [weight, volume]); missing dimensions count as 0. */
  demand?: number[];
  /** Tags every serving vehicle must carry. */
  requiredTags?: string[];
  /**
   * 1 (lowest) to 5 (highest), default 3. When not every visit fits, lower priorities are dropped first:
   * serving one visit of priority p outweighs serving any number of visits of lower priorities.
   */
  priority?: number;
  /**
   * Makes this visit the delivery of a pickup-and-delivery pair: the id of its pickup visit. Both are
   * served by the same vehicle, the pickup first, or both are dropped. The pair's load is the pickup's
   * `demand`: it is on board from the pickup to the delivery (the delivery's own `demand` is ignored);
   * ordinary visits' demand is on board from the start until the visit. A visit is in at most one pair.
   * The pair's priority is the higher of the two.
   */
  pickupVisitId?: string;
}

/** A break of `duration` minutes that starts no earlier than `earliestStart` and ends by `latestEnd`. */
export interface VehicleBreak {
  earliestStart: Minutes;
  latestEnd: Minutes;
  duration: Minutes;
}

export interface RoutingVehicle {
  /** Caller id, returned in the solution. */
  id: string;
  start: Location;
  /** Where the route ends when it returns. Default: `start`. */
  end?: Location;
  /** false: the route ends when the last visit is finished. Default true. */
  returnToEnd?: boolean;
  /** Hard maximum load per capacity dimension. Missing dimensions are unlimited. */
  capacity?: number[];
  /** Soft minimum load per dimension for a used vehicle; each unit short costs `underloadCost`. */
  minCapacity?: number[];
  /** Average speed for the default provider. Default 40 km/h. */
  speedKmh?: number;
  /** Leave the start no earlier than `start`, be back (or done, if not returning) by `end`. */
  workingTime: TimeWindow;
  /** Breaks to take during the route, if the vehicle is used. They are taken where the vehicle is. */
  breaks?: VehicleBreak[];
  /** Capabilities: a vehicle serves a visit only if its tags include all of the visit's tags. */
  tags?: string[];
  /** Cost of using the vehicle in the hierarchical objective (a priority: cheaper vehicles are used first). Default 1. */
  fixedCost?: number;
  maxVisits?: number;
  /** Maximum route distance, in the provider's unit. */
  maxDistance?: number;
  /** Maximum route duration, from leaving the start to arriving at the end (or finishing the last visit). */
  maxDuration?: Minutes;
}

/**
 * A serialisable description of a built-in travel provider, so that another thread (shared/routing-threads)
 * can rebuild the same provider: providers hold functions, which cannot be posted.
 */
export type TravelSpec = { kind: "greatCircle"; roadFactor: number } | { kind: "euclidean"; truncate: boolean } | MatrixTravelSpec;

/**
 * Directed travel between fixed points, from a road network (shared/domain/travel): row-major
 * `keys.length`² durations (seconds) and distances (metres), entry i·n + j from point i to point j —
 * asymmetric in general. A location is looked up by `locationKey` (coordinates rounded to 1e-5).
 * The arrays may live in a SharedArrayBuffer, so posting the spec to a thread copies nothing.
 */
export interface MatrixTravelSpec {
  kind: "matrix";
  keys: readonly string[];
  durationsSeconds: Float32Array;
  distancesMetres: Float32Array;
}

/** Builds the travel matrices. Locations are those of visits and vehicles, in an order of the solver's choosing. */
export interface TravelProvider {
  /** Set by the built-in providers; a custom provider without one is solved on one thread. */
  readonly spec?: TravelSpec;
  /** Whether the solver can route to this location at all (invalid ones are dropped as `bad coordinates`). */
  isValidLocation(location: Location): boolean;
  /** Row-major n×n distances between the given locations. */
  distances(locations: readonly Location[]): Float64Array;
  /**
   * Row-major n×n travel minutes for a vehicle of this speed between the same `locations`, given the
   * distances above. A road-network provider answers its own durations and ignores the speed.
   */
  travelMinutes(distances: Float64Array, speedKmh: number, locations: readonly Location[]): Float64Array;
}

export interface RoutingProblem {
  visits: RoutingVisit[];
  vehicles: RoutingVehicle[];
  /** Default: great-circle distance × 1.3 road factor, in metres, at each vehicle's speed. */
  travel?: TravelProvider;
  /**
   * A warm start (a re-plan of routes already on the road): per vehicle, visits in the order they are
   * planned now. Before construction, each is put on its vehicle in that order while the route stays
   * feasible; the rest (and visits of pickup-and-delivery pairs) are placed by construction as usual.
   * The search only keeps a plan at least as good, so the answer is never worse than these routes.
   */
  initialRoutes?: ReadonlyArray<{ vehicleId: string; visitIds: readonly string[] }>;
}

/**
 * `hierarchical`: serve as many visits as possible, then minimise Σ fixedCost of the vehicles used,
 * then distance. `distance`: serve as many visits as possible, then minimise distance.
 */
export type RoutingObjective = "hierarchical" | "distance";

export interface SolveOptions {
  /** Seed of the pseudo-random generator; the same seed and iteration limit give the same solution. Default 1. */
  seed?: number;
  /** Wall-clock budget. Default 10 000 ms. Pass Infinity with `maxIterations` for a deterministic run. */
  timeLimitMs?: number;
  /** Ruin-and-recreate iterations. Default unlimited (the time limit decides). */
  maxIterations?: number;
  /**
   * Stop once the search has stopped paying (see `convergenceFor` in search.ts: a cooling horizon in
   * iterations that grows with the visits, then windows of max(1000, 40 n) iterations until one gains
   * less than 0.05 % of the first solution's distance and serves no more visits; n = visits). Default
   * true; false spends the whole budget.
   */
  earlyStop?: boolean;
  /**
   * Checked with the clock during the search: true ends it now with the best plan met (`endedBy:
   * "deadline"`), e.g. when the caller's own deadline is near. Default: never.
   */
  mustStop?: () => boolean;
  objective?: RoutingObjective;
  /** Cost of one unit of load below a vehicle's `minCapacity`, in distance units. Default 1000. */
  underloadCost?: number;
  /** Millisecond clock, injectable for tests. Default `Date.now`. */
  now?: () => number;
  /** Elite sharing with searches running beside this one (shared/routing-threads); none: a lone search. */
  exchange?: EliteExchange;
}

/**
 * The best solution of one search, in the solver's internal numbering (visits first, then each vehicle's
 * nodes: the same for every search of the same problem). Plain data: it can be posted between threads.
 */
export interface Elite {
  /** Σ drop weight of the visits left out. */
  dropped: number;
  /** Routes' cost (fixed cost under the hierarchical objective, distance, underload). */
  cost: number;
  snapshot: { readonly routes: readonly (readonly number[])[]; readonly window: Int32Array; readonly unassigned: readonly number[] };
}

/**
 * Sync points of a search with others. During the annealing phase the solver asks `epoch` after every
 * iteration; each time it grows the solver hands its best solution to `sync`, and continues from the
 * elite `sync` returns if that one is better than its own best (never otherwise).
 */
export interface EliteExchange {
  /** Non-decreasing; from an iteration count, deterministic; from a clock, not. */
  epoch(iterations: number): number;
  sync(epoch: number, best: Elite): Elite | undefined;
}

export type DropReason =
  | "bad coordinates"
  | "no vehicle with matching tags"
  | "exceeds every vehicle's capacity"
  | "outside every working time"
  | "could not be fitted"
  /** The other visit of its pickup-and-delivery pair cannot be served (for a reason of its own or no common vehicle). */
  | "pickup and delivery cannot both be served";

export interface TripStop {
  visitId: string;
  arrival: Minutes;
  waiting: Minutes;
  /** Start of service. */
  start: Minutes;
  departure: Minutes;
  /** Distance driven from the previous stop (or the start). */
  distance: number;
  /** Load delivered so far on this route, this visit included, per dimension (a pair's load counts at its delivery). */
  load: number[];
}

export interface ScheduledBreak {
  start: Minutes;
  end: Minutes;
  /** Index in `stops` of the visit the break follows; -1 when taken at the start. */
  afterStop: number;
}

export interface VehicleRoute {
  vehicleId: string;
  /** Departure from the start location. */
  departure: Minutes;
  /** Arrival at the end location, or the end of the last visit when the vehicle does not return. */
  arrival: Minutes;
  stops: TripStop[];
  breaks: ScheduledBreak[];
  distance: number;
  duration: Minutes;
  travelTime: Minutes;
  waitingTime: Minutes;
  serviceTime: Minutes;
  load: number[];
  /** Load units short of the vehicle's soft `minCapacity`, summed over dimensions. */
  underload: number;
}

export interface DroppedVisit {
  visitId: string;
  reason: DropReason;
}

export interface RoutingSolution {
  /** Used vehicles only, in the order of `problem.vehicles`. */
  routes: VehicleRoute[];
  dropped: DroppedVisit[];
  totals: {
    vehicles: number;
    visits: number;
    distance: number;
    duration: Minutes;
    fixedCost: number;
  };
  iterations: number;
  /**
   * How the search ended: `earlyStop` (it had stopped paying), `budget` (time or iteration limit spent),
   * `deadline` (`mustStop` said so) or `threadFailure` (a search thread of a parallel solve failed; the
   * plan is the best the others reached, or the failed thread's last shared one).
   */
  endedBy: RoutingEnd;
}

export const routingEnds = ["earlyStop", "budget", "deadline", "threadFailure"] as const;
export type RoutingEnd = (typeof routingEnds)[number];
