// The `feature` set (issue #43's yardstick): the realistic day of early-stop.ts with one route-planner
// feature each, the ones a search that only ever sees the plain day could quietly break or stall on:
//   pairs        every second visit is the delivery of the visit before it (pickup-and-delivery pairs)
//   overloaded   the visits of a day for 60 % of its fleet, priorities 1–5: the search must trade dropped weight
//   maxVisits    each vehicle serves at most 18 visits (the plain day's routes hold ~25)
//   away         each vehicle starts at its driver's home and ends at another depot, both away from the hub
//   asymmetric   a directed road matrix (matrixTravel, as the road-travel provider gives): north- and east-bound
//                legs are longer and slower than the way back
// `npm run bench:routing -- --set feature --visits 100 --seeds 1,2,3 --seconds 5 --clock cpu` solves each
// feature day once per seed and holds every plan to the independent checker (a violation throws);
// `--compare-with DIR` runs them paired against another build (compare.ts), served weight first.
import { haversineMetres, locationKey, matrixTravel } from "#shared/routing/matrix";
import type { Location, RoutingObjective, RoutingProblem, RoutingSolution } from "#shared/routing/model";
import { Random } from "#shared/routing/random";
import { realisticDay, VISITS_PER_VEHICLE } from "./early-stop.ts";
import { realisticProblem } from "./realistic.ts";
import { solveChecked } from "./run.ts";

export const FEATURES = ["pairs", "overloaded", "maxVisits", "away", "asymmetric"] as const;
export type Feature = (typeof FEATURES)[number];

/** Fewer vehicles than the plain day needs: `overloaded` keeps this share of them. */
const OVERLOADED_FLEET_SHARE = 0.6;
const MAX_VISITS = 18;
/** How far (km) from the hub the `away` vehicles start and end. */
const AWAY_KM = { low: 5, high: 15 };
/** `asymmetric`: a leg heading north or east is this much longer (and slower) per unit of its heading than the way back. */
const UPHILL_SHARE = 0.3;
const SPEED_KMH = 35;
const ROAD_FACTOR = 1.3;

/** The realistic day of `visits` visits for `seed` with one feature; the same problem for the same arguments. */
export function featureDay(feature: Feature, visits: number, seed: number): RoutingProblem {
  const random = new Random(seed * 7919 + FEATURES.indexOf(feature));
  switch (feature) {
    case "pairs": {
      const day = realisticDay(visits, seed);
      return {
        ...day,
        visits: day.visits.map((visit, index) =>
          index % 2 === 1 ? { ...visit, pickupVisitId: day.visits[index - 1]!.id, demand: undefined } : visit,
        ),
      };
    }
    case "overloaded": {
      const vehicles = Math.max(1, Math.round(Math.ceil(visits / VISITS_PER_VEHICLE) * OVERLOADED_FLEET_SHARE));
      const day = realisticProblem(visits, vehicles, seed);
      return { ...day, visits: day.visits.map((visit) => ({ ...visit, priority: 1 + Math.floor(random.next() * 5) })) };
    }
    case "maxVisits": {
      const day = realisticDay(visits, seed);
      return { ...day, vehicles: day.vehicles.map((vehicle) => ({ ...vehicle, maxVisits: MAX_VISITS })) };
    }
    case "away": {
      const day = realisticDay(visits, seed);
      const around = (centre: Location) => {
        const km = AWAY_KM.low + random.next() * (AWAY_KM.high - AWAY_KM.low);
        const angle = random.next() * 2 * Math.PI;
        return {
          lat: centre.lat + (km / 111.2) * Math.sin(angle),
          lng: centre.lng + (km / (111.2 * Math.cos((centre.lat * Math.PI) / 180))) * Math.cos(angle),
        };
      };
      return {
        ...day,
        vehicles: day.vehicles.map((vehicle) => ({ ...vehicle, start: around(vehicle.start), end: around(vehicle.start) })),
      };
    }
    case "asymmetric": {
      const day = realisticDay(visits, seed);
      return {
        ...day,
        travel: asymmetricTravel([...day.visits.map((visit) => visit.location), ...day.vehicles.map((vehicle) => vehicle.start)]),
      };
    }
  }
}

/**
 * A directed matrix over `points`: the great-circle road distance, longer by up to `UPHILL_SHARE` on a leg
 * heading north or east (in proportion to its share in those directions), the plain distance heading south
 * or west; durations at `SPEED_KMH` over the directed distance, so the time windows see the asymmetry too.
 */
function asymmetricTravel(points: readonly Location[]) {
  const keys = [...new Set(points.map(locationKey))];
  const at = keys.map((key) => {
    const [lat, lng] = key.split(",").map(Number);
    return { lat: lat!, lng: lng! };
  });
  const n = keys.length;
  const distancesMetres = new Float32Array(n * n);
  const durationsSeconds = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (i === j) continue;
      const from = at[i]!;
      const to = at[j]!;
      const metres = ROAD_FACTOR * haversineMetres(from, to);
      const north = Math.max(0, to.lat - from.lat);
      const east = Math.max(0, (to.lng - from.lng) * Math.cos((from.lat * Math.PI) / 180));
      const span = Math.abs(to.lat - from.lat) + Math.abs((to.lng - from.lng) * Math.cos((from.lat * Math.PI) / 180));
      const directed = metres * (1 + (span > 0 ? (UPHILL_SHARE * (north + east)) / span : 0));
      distancesMetres[i * n + j] = directed;
      durationsSeconds[i * n + j] = directed / ((SPEED_KMH * 1000) / 3600);
    }
  }
  return matrixTravel({ kind: "matrix", keys, distancesMetres, durationsSeconds });
}

/**
 * Visits served per priority, highest first (5 … 1; a visit without one counts as 3): compared
 * lexicographically, as the hierarchical objective weighs them — one more visit of a priority outweighs
 * any number of lower ones.
 */
export function servedByPriority(problem: RoutingProblem, solution: RoutingSolution): number[] {
  const priorityOf = new Map(problem.visits.map((visit) => [visit.id, visit.priority ?? 3]));
  const served = [0, 0, 0, 0, 0];
  for (const route of solution.routes) for (const stop of route.stops) served[5 - (priorityOf.get(stop.visitId) ?? 3)]!++;
  return served;
}

/** Negative when `a` serves less weight than `b`, 0 when the same, positive when more. */
export function compareServed(a: readonly number[], b: readonly number[]): number {
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return a[index]! - b[index]!;
  return 0;
}

export function runFeatures(options: {
  visits: number;
  seeds: number[];
  seconds: number;
  objective: RoutingObjective;
  maxIterations?: number;
  earlyStop: boolean;
  log: (line: string) => void;
}): void {
  const { log } = options;
  log(
    `feature days of ${options.visits} visits, seeds ${options.seeds.join(",")}, ${options.seconds} CPU-s each` +
      `${options.earlyStop ? " (early stop on)" : ""}, objective ${options.objective}`,
  );
  let runs = 0;
  for (const seed of options.seeds) {
    for (const feature of FEATURES) {
      const problem = featureDay(feature, options.visits, seed);
      const solution = solveChecked(problem, { ...options, seed }, `day ${seed} ${feature}`);
      runs++;
      const dropped = new Map<string, number>();
      for (const visit of solution.dropped) dropped.set(visit.reason, (dropped.get(visit.reason) ?? 0) + 1);
      const offered = [0, 0, 0, 0, 0];
      for (const visit of problem.visits) offered[5 - (visit.priority ?? 3)]!++;
      log(
        `day ${seed} ${feature}: served ${solution.totals.visits} of ${problem.visits.length} ` +
          `(by priority 5…1: ${servedByPriority(problem, solution).join("/")} of ${offered.join("/")}), vehicles ${solution.routes.length}, fixed ${solution.totals.fixedCost}, ` +
          `distance ${(solution.totals.distance / 1000).toFixed(1)} km, dropped ${JSON.stringify(Object.fromEntries(dropped))}, ` +
          `${solution.iterations} it, ended by ${solution.endedBy}, 0 violations`,
      );
    }
  }
  log(`summary: ${runs} feature runs, 0 violations`);
}
