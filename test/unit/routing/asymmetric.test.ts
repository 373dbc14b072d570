import { describe, expect, it } from "vitest";
import { checkSolution } from "#shared/routing/check";
import { buildInstance } from "#shared/routing/instance";
import { euclideanTravel, locationKey, matrixTravel } from "#shared/routing/matrix";
import type { Location, MatrixTravelSpec, RoutingProblem } from "#shared/routing/model";
import { Random } from "#shared/routing/random";
import { solveRouting } from "#shared/routing/solver";
import { idleRoutingThreads, solveRoutingInParallel } from "#shared/routing-threads/pool";

/**
 * Road matrices are asymmetric (one-way streets, motorway ramps): i → j is not j → i. The moves keep
 * every route's orientation (relocate, swap, 2-opt* exchange tails; nothing is reversed), and the
 * checker replays each leg from the directed matrix, so on random asymmetric matrices the solver's
 * reported distance must equal the checker's exactly, and on small instances the solver must find
 * the brute-force optimum of the directed costs.
 */
function asymmetricSpec(random: Random, points: Location[]): MatrixTravelSpec {
  const n = points.length;
  const durationsSeconds = new Float32Array(n * n);
  const distancesMetres = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (i === j) continue;
      // Independent directions: from 1 to 3 km plus a one-way detour of up to 2 km.
      const metres = Math.round(1000 + random.next() * 2000 + (random.next() < 0.5 ? random.next() * 2000 : 0));
      distancesMetres[i * n + j] = metres;
      durationsSeconds[i * n + j] = Math.round(metres / 8 + random.next() * 120);
    }
  }
  return { kind: "matrix", keys: points.map(locationKey), durationsSeconds, distancesMetres };
}

function randomProblem(seed: number, visitCount: number, vehicleCount: number, windows: boolean): RoutingProblem {
  const random = new Random(seed);
  const depot = { lat: -6.2, lng: 106.8 };
  const visits = Array.from({ length: visitCount }, (_, i) => {
    const start = Math.round(random.next() * 200);
    return {
      id: `v${i}`,
      location: { lat: -6.2 + 0.001 * (i + 1), lng: 106.8 + 0.0007 * ((i * 5) % 11) },
      visitTime: 5,
      demand: [1 + random.int(3)],
      ...(windows ? { timeWindows: [{ start, end: start + 60 + Math.round(random.next() * 90) }] } : {}),
    };
  });
  const vehicles = Array.from({ length: vehicleCount }, (_, k) => ({
    id: `k${k}`,
    start: depot,
    capacity: [windows ? 12 : 100],
    workingTime: { start: 0, end: 600 },
  }));
  const travel = matrixTravel(asymmetricSpec(random, [...visits.map((visit) => visit.location), depot]));
  return { visits, vehicles, travel };
}

/** The least total directed distance serving every visit, over every split between the vehicles and every order (no windows, no capacity). */
function bruteForce(problem: RoutingProblem): number {
  const locations = [...problem.visits.map((visit) => visit.location), problem.vehicles[0]!.start];
  const distance = problem.travel!.distances(locations);
  const n = locations.length;
  const depot = n - 1;
  const d = (a: number, b: number) => distance[a * n + b]!;
  const visits = problem.visits.map((_, i) => i);
  const tourCost = new Map<number, number>();
  // Best tour from the depot over each subset of visits back to the depot (Held–Karp over the directed costs).
  const full = 1 << visits.length;
  const best = Array.from({ length: full }, () => new Float64Array(visits.length).fill(Infinity));
  for (let v = 0; v < visits.length; v++) best[1 << v]![v] = d(depot, v);
  for (let set = 1; set < full; set++) {
    for (let last = 0; last < visits.length; last++) {
      const cost = best[set]![last]!;
      if (!(set & (1 << last)) || cost === Infinity) continue;
      for (let next = 0; next < visits.length; next++) {
        if (set & (1 << next)) continue;
        const extended = set | (1 << next);
        best[extended]![next] = Math.min(best[extended]![next]!, cost + d(last, next));
      }
    }
  }
  for (let set = 1; set < full; set++) {
    let cost = Infinity;
    for (let last = 0; last < visits.length; last++) if (set & (1 << last)) cost = Math.min(cost, best[set]![last]! + d(last, depot));
    tourCost.set(set, cost);
  }
  tourCost.set(0, 0);
  if (problem.vehicles.length === 1) return tourCost.get(full - 1)!;
  let optimum = Infinity;
  for (let set = 0; set < full; set++) optimum = Math.min(optimum, tourCost.get(set)! + tourCost.get(full - 1 - set)!);
  return optimum;
}

describe("asymmetric travel", () => {
  it("is told apart from symmetric travel when the instance is built (the insertion scan reads a row only on symmetric ones)", () => {
    const problem = randomProblem(1, 6, 2, false);
    expect(buildInstance(problem).symmetricDistance).toBe(false);
    expect(buildInstance({ ...problem, travel: euclideanTravel() }).symmetricDistance).toBe(true);
  });

  it("reports exactly the distance the checker replays from the directed matrix, on random asymmetric instances", () => {
    for (let seed = 1; seed <= 12; seed++) {
      const problem = randomProblem(seed, 10 + (seed % 3) * 8, 3, seed % 2 === 0);
      for (const objective of ["distance", "hierarchical"] as const) {
        const solution = solveRouting(problem, { seed, objective, maxIterations: 400, timeLimitMs: Infinity });
        const check = checkSolution(problem, solution);
        expect(check.violations, `seed ${seed} ${objective}`).toEqual([]);
        expect(solution.totals.distance, `seed ${seed} ${objective}`).toBe(check.distance);
        expect(solution.totals.visits).toBeGreaterThan(0);
      }
    }
  }, 60_000);

  it("finds the brute-force optimum of the directed costs on a fixed corpus of up to 8 visits and 2 vehicles", () => {
    const corpus = [
      [101, 5, 1],
      [102, 6, 1],
      [103, 7, 1],
      [104, 8, 1],
      [105, 5, 2],
      [106, 6, 2],
      [107, 7, 2],
      [108, 8, 2],
      [109, 8, 2],
    ] as const;
    for (const [seed, visits, vehicles] of corpus) {
      const problem = randomProblem(seed, visits, vehicles, false);
      const solution = solveRouting(problem, {
        seed: 1,
        objective: "distance",
        maxIterations: 3000,
        timeLimitMs: Infinity,
        earlyStop: false,
      });
      expect(checkSolution(problem, solution).violations).toEqual([]);
      expect(solution.totals.visits).toBe(visits);
      const optimum = bruteForce(problem);
      expect(solution.totals.distance, `seed ${seed}`).toBeCloseTo(optimum, 6);
      // The optimum reversed costs something else: the instance is asymmetric where it matters.
      const reversedProblem = { ...problem, travel: matrixTravel(transposed(problem)) };
      expect(
        Math.abs(bruteForce(reversedProblem) - optimum) + Math.abs(reversedCost(problem, solution) - solution.totals.distance),
        `seed ${seed}`,
      ).toBeGreaterThan(1);
    }
  }, 60_000);
});

describe("asymmetric travel in parallel search threads", () => {
  it("hands the matrices to the threads (no single-thread fallback) and the plan still matches the checker exactly", async () => {
    const problem = randomProblem(7, 20, 3, true);
    const idleBefore = idleRoutingThreads();
    const solution = await solveRoutingInParallel(problem, {
      threads: 2,
      seed: 3,
      maxIterations: 300,
      timeLimitMs: Infinity,
      sync: { iterations: 100 },
    });
    // The pool kept the two threads it started: the solve ran in them.
    expect(idleRoutingThreads()).toBe(Math.max(idleBefore, 2));
    const check = checkSolution(problem, solution);
    expect(check.violations).toEqual([]);
    expect(solution.totals.distance).toBe(check.distance);
  }, 60_000);
});

function transposed(problem: RoutingProblem): MatrixTravelSpec {
  const spec = problem.travel!.spec as MatrixTravelSpec;
  const n = spec.keys.length;
  const flip = (m: Float32Array) => Float32Array.from({ length: n * n }, (_, k) => m[(k % n) * n + Math.floor(k / n)]!);
  return { ...spec, durationsSeconds: flip(spec.durationsSeconds), distancesMetres: flip(spec.distancesMetres) };
}

/** The solution's routes driven backwards. */
function reversedCost(problem: RoutingProblem, solution: ReturnType<typeof solveRouting>): number {
  const byId = new Map(problem.visits.map((visit) => [visit.id, visit.location]));
  let total = 0;
  for (const route of solution.routes) {
    const depot = problem.vehicles.find((vehicle) => vehicle.id === route.vehicleId)!.start;
    const path = [depot, ...route.stops.map((stop) => byId.get(stop.visitId)!).reverse(), depot];
    const distance = problem.travel!.distances(path);
    for (let k = 1; k < path.length; k++) total += distance[(k - 1) * path.length + k]!;
  }
  return total;
}
