import { describe, expect, it } from "vitest";
import { buildInstance } from "#shared/routing/instance";
import { TailSummaries } from "#shared/routing/penalised";
import { Random } from "#shared/routing/random";
import { RuinRecreate } from "#shared/routing/ruin-recreate";
import { type Route, Segment } from "#shared/routing/route-state";
import { Solution } from "#shared/routing/solution";
import { randomFeasibleRoutes, randomProblem } from "./random-problem.ts";

/** The node-by-node concatenation the O(1) evaluation replaces: head 0..i, head's breaks after i, tail's visits from j, head's end. */
function concatenated(segment: Segment, head: Route, i: number, tail: Route, j: number): Segment {
  const { isBreak } = head.instance;
  segment.setPrefix(head, i);
  for (let p = i + 1; p < head.nodes.length - 1; p++) if (isBreak[head.nodes[p]!]) segment.append(head.nodes[p]!);
  for (let p = j; p < tail.nodes.length - 1; p++) if (!isBreak[tail.nodes[p]!]) segment.append(tail.nodes[p]!);
  return segment.append(head.nodes[head.nodes.length - 1]!);
}

function expectClose(actual: Segment, expected: Segment): void {
  for (const key of ["duration", "timeWarp", "earliest", "latest", "distance"] as const) {
    expect(Math.abs(actual[key] - expected[key])).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected[key])));
  }
  expect(actual.last).toBe(expected.last);
}

describe("2-opt* tails in O(1) (TailSummaries)", () => {
  it("equal the node-by-node concatenation across vehicle classes, ends and breaks, on random routes as they change", () => {
    let compared = 0;
    let acrossClasses = 0;
    let withBreaks = 0;
    for (let seed = 1; seed <= 10; seed++) {
      // Vehicles 0 and 1 share a class and take two breaks; vehicle 2 is of another class, breakless, ends elsewhere
      // (another end profile) and has its own limits (random-problem.ts). One vehicle drives slower: another matrix.
      const problem = randomProblem(seed, 24);
      problem.vehicles[1] = { ...problem.vehicles[1]!, speedKmh: 30 };
      const instance = buildInstance(problem);
      const solution = new Solution(instance, { vehicle: 1000, underload: 7 });
      const random = new Random(seed);
      randomFeasibleRoutes(solution, random);
      const ruinRecreate = new RuinRecreate(solution, random);
      const tails = new TailSummaries(solution);
      const fast = new Segment(instance, solution.windows);
      const slow = new Segment(instance, solution.windows);
      for (let step = 0; step < 12; step++) {
        const { routes } = solution;
        for (let ra = 0; ra < routes.length; ra++) {
          for (let rb = 0; rb < routes.length; rb++) {
            if (ra === rb) continue;
            const a = routes[ra]!;
            const b = routes[rb]!;
            for (let i = 0; i < a.nodes.length - 1; i++) {
              for (let j = 1; j < b.nodes.length; j++) {
                tails.join(fast, a, ra, i, b, rb, j);
                expectClose(fast, concatenated(slow, a, i, b, j));
                compared++;
                if (instance.vehicleClass[a.vehicle] !== instance.vehicleClass[b.vehicle]) acrossClasses++;
                if (instance.breakNodes[a.vehicle]!.length > 0) withBreaks++;
              }
            }
          }
        }
        for (let r = 0; r < routes.length; r++) {
          const route = routes[r]!;
          for (let p = 1; p < route.nodes.length; p++) {
            const rest = route.nodes.slice(p, -1);
            expect(tails.visitsFrom(r, route, p)).toBe(rest.filter((node) => node < instance.visitCount).length);
            expect(tails.breakFrom(r, route, p)).toBe(rest.some((node) => instance.isBreak[node] === 1));
            for (let k = 0; k < instance.vehicleCount; k++) {
              const fits = rest.every((node) => node >= instance.visitCount || instance.compatible[node * instance.vehicleCount + k] === 1);
              expect(tails.tailFits(r, route, p, k)).toBe(fits);
            }
          }
        }
        // Change the routes (some steps rolled back: the routes' versions come back, and so must the summaries).
        solution.begin();
        ruinRecreate.ruin();
        ruinRecreate.recreate([...solution.unassigned], true);
        if (step % 3 === 0) solution.rollback();
        else solution.commit();
      }
    }
    expect(compared).toBeGreaterThan(10_000);
    expect(acrossClasses).toBeGreaterThan(1000);
    expect(withBreaks).toBeGreaterThan(1000);
  }, 120_000);
});
