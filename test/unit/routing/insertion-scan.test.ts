import { describe, expect, it } from "vitest";
import { buildInstance } from "#shared/routing/instance";
import { Blinks, Random } from "#shared/routing/random";
import { EPSILON, type Insertion, type Route, Segment } from "#shared/routing/route-state";
import { Solution } from "#shared/routing/solution";
import { randomFeasibleRoutes, randomProblem } from "./random-problem.ts";

describe("Blinks.skipMany", () => {
  it("draws what as many calls of skip draw, and says whether one of them skipped", () => {
    for (const rate of [0, 0.01, 0.3, 0.9, 1]) {
      for (let seed = 1; seed <= 20; seed++) {
        const one = new Random(seed);
        const many = new Random(seed);
        const byOne = new Blinks(one, rate);
        const byMany = new Blinks(many, rate);
        const plan = new Random(1000 + seed);
        for (let call = 0; call < 40; call++) {
          const count = plan.int(4) === 0 ? 1 : plan.int(60);
          let skipped = false;
          for (let k = 0; k < count; k++) if (byOne.skip()) skipped = true;
          expect(byMany.skipMany(count)).toBe(skipped);
          // The same state: the next single calls agree too.
          expect(byMany.skip()).toBe(byOne.skip());
        }
        expect(many.next()).toBe(one.next());
      }
    }
  });
});

/**
 * `findInsertion` as it was before positions no window can take were left out: every position below the bound
 * draws its blink and is checked. The reference the scan must agree with, answer and random numbers alike.
 */
function referenceInsertion(
  solution: Solution,
  route: Route,
  v: number,
  bound: number,
  blinks: Blinks | undefined,
  out: Insertion,
): boolean {
  const { instance } = solution;
  const segment = new Segment(instance, solution.windows);
  out.blinked = false;
  if (route.visitCount + 1 > instance.maxVisits[route.vehicle]! || !route.fitsLoad(v, 1)) return false;
  const { distance, location, locationCount, windowOffset, windowOpen, windowClose, service } = instance;
  const fixed =
    route.costOf(route.visitCount > 0 ? route.distance : route.fDistance[route.nodes.length - 1]!, route.underloadWith(v)) - route.cost;
  const at = location[v]! * locationCount;
  let found = false;
  for (let p = 0; p < route.nodes.length - 1; p++) {
    const prev = route.fLast[p]!;
    const next = route.nextLocation[p]!;
    const cost = fixed + distance[prev * locationCount + location[v]!]! + distance[at + next]! - distance[prev * locationCount + next]!;
    if (cost >= bound) continue;
    if (blinks?.skip()) {
      out.blinked = true;
      continue;
    }
    const ready = route.fEarliest[p]! + route.fDuration[p]! - route.fTimeWarp[p]! + route.time[prev * locationCount + location[v]!]!;
    const nextLatest = route.bLatest[route.bNext[p + 1]!]! + EPSILON;
    for (let w = windowOffset[v]!; w < windowOffset[v + 1]!; w++) {
      const start = Math.max(ready, windowOpen[w]!);
      if (start > windowClose[w]! + EPSILON || start + service[v]! + route.time[at + next]! > nextLatest) continue;
      segment
        .setPrefix(route, p)
        .appendNode(v, windowOpen[w]!, windowClose[w]!)
        .appendSuffix(route, p + 1);
      if (segment.feasibleFor(route.vehicle)) {
        bound = cost;
        out.cost = cost;
        out.position = p + 1;
        out.window = w;
        found = true;
        break;
      }
    }
  }
  return found;
}

/** Positions at the ends of the route where no window of v could start in time or leave room for what follows. */
function deadPositions(solution: Solution, route: Route, v: number): number {
  const { windowOffset, windowOpen, windowClose, service } = solution.instance;
  const windows = Array.from({ length: windowOffset[v + 1]! - windowOffset[v]! }, (_, k) => windowOffset[v]! + k);
  const earliestDone = Math.min(...windows.map((w) => windowOpen[w]!)) + service[v]!;
  const latestClose = Math.max(...windows.map((w) => windowClose[w]!));
  let dead = 0;
  for (let p = 0; p < route.nodes.length - 1; p++) {
    const done = route.fEarliest[p]! + route.fDuration[p]! - route.fTimeWarp[p]!;
    if (earliestDone > route.bLatest[route.bNext[p + 1]!]! + EPSILON || done > latestClose + EPSILON) dead++;
  }
  return dead;
}

describe("the insertion scan leaves out positions no window can take", () => {
  it("finds the insertion the position-by-position scan finds, drawing the same blinks, on random routes and bounds", () => {
    let compared = 0;
    let withDead = 0;
    let foundSome = 0;
    for (let seed = 1; seed <= 25; seed++) {
      const instance = buildInstance(randomProblem(seed, 16));
      const solution = new Solution(instance, { vehicle: 1000, underload: 10 });
      const random = new Random(seed);
      randomFeasibleRoutes(solution, random);
      // Take a few visits out again, so that routed and unrouted visits both meet every route.
      const out = [...instance.routable].filter((v) => solution.routeOf[v]! >= 0 && random.next() < 0.3);
      solution.removeAll(out);
      for (const v of instance.routable) {
        if (solution.routeOf[v]! >= 0) continue;
        for (const route of solution.routes) {
          for (const bound of [Infinity, 1000 * instance.fixedCost[route.vehicle]! + 40, 25, 5]) {
            for (const rate of [0, 0.2]) {
              const drawSeed = seed * 1000 + v;
              const expectedRandom = new Random(drawSeed);
              const actualRandom = new Random(drawSeed);
              const expectedBlinks = rate > 0 ? new Blinks(expectedRandom, rate) : undefined;
              const actualBlinks = rate > 0 ? new Blinks(actualRandom, rate) : undefined;
              const expected: Insertion = { cost: 0, position: 0, window: 0 };
              const actual: Insertion = { cost: 0, position: 0, window: 0 };
              const expectedFound = referenceInsertion(solution, route, v, bound, expectedBlinks, expected);
              const actualFound = route.findInsertion(v, bound, actualBlinks, actual);
              expect(actualFound).toBe(expectedFound);
              expect(actual.blinked).toBe(expected.blinked);
              if (expectedFound) {
                expect([actual.cost, actual.position, actual.window]).toEqual([expected.cost, expected.position, expected.window]);
                foundSome++;
              }
              expect(actualRandom.next()).toBe(expectedRandom.next());
              compared++;
            }
          }
          if (deadPositions(solution, route, v) > 0) withDead++;
        }
      }
    }
    expect(compared).toBeGreaterThan(1000);
    // The cases cover what the change is about: routes with positions left out, and insertions found.
    expect(withDead).toBeGreaterThan(50);
    expect(foundSome).toBeGreaterThan(100);
  }, 120_000);
});
