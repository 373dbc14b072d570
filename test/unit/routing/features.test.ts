import { describe, expect, it } from "vitest";
import { checkSolution } from "#shared/routing/check";
import { euclideanTravel } from "#shared/routing/matrix";
import type { RoutingProblem, RoutingVisit } from "#shared/routing/model";
import { solveRouting } from "#shared/routing/solver";

const at = (x: number, y: number) => ({ lat: y, lng: x });
const visit = (id: string, x: number, extra: Partial<RoutingVisit> = {}): RoutingVisit => ({
  id,
  location: at(x, 0),
  visitTime: 1,
  ...extra,
});
const solve = (problem: RoutingProblem, seed = 1) =>
  solveRouting(problem, { seed, timeLimitMs: Infinity, maxIterations: 2000, objective: "distance" });

describe("visit priority", () => {
  it("drops the lowest priority first when the route is full", () => {
    for (const seed of [1, 2, 3]) {
      const problem: RoutingProblem = {
        travel: euclideanTravel(),
        // The low-priority visit is the cheapest to serve (on the way), yet it is the one left out.
        visits: [visit("far-a", 10, { priority: 5 }), visit("near", 1, { priority: 1 }), visit("far-b", 11, { priority: 4 })],
        vehicles: [{ id: "van", start: at(0, 0), workingTime: { start: 0, end: 1000 }, maxVisits: 2 }],
      };
      const solution = solve(problem, seed);
      expect(solution.dropped).toEqual([{ visitId: "near", reason: "could not be fitted" }]);
      expect(checkSolution(problem, solution).violations).toEqual([]);
    }
  });

  it("one visit of a higher priority outweighs any number of lower ones", () => {
    const problem: RoutingProblem = {
      travel: euclideanTravel(),
      visits: [visit("big", 5, { demand: [10], priority: 4 }), visit("small-1", 2, { demand: [5] }), visit("small-2", 3, { demand: [5] })],
      vehicles: [{ id: "van", start: at(0, 0), workingTime: { start: 0, end: 1000 }, capacity: [10] }],
    };
    const solution = solve(problem);
    expect(solution.routes[0]!.stops.map((s) => s.visitId)).toEqual(["big"]);
    expect(solution.dropped.map((d) => d.visitId).sort()).toEqual(["small-1", "small-2"]);
    // Without priorities the count wins: the two small visits are served.
    const plain = solve({ ...problem, visits: problem.visits.map(({ priority: _, ...rest }) => rest) });
    expect(plain.dropped.map((d) => d.visitId)).toEqual(["big"]);
  });
});

describe("vehicle start and end away from the hub, maximum visits per route", () => {
  it("starts at the driver's home, ends at the depot, never exceeds maxVisits; the checker replays both", () => {
    const problem: RoutingProblem = {
      travel: euclideanTravel(),
      visits: Array.from({ length: 6 }, (_, i) => visit(`v${i}`, 10 + i)),
      vehicles: [
        { id: "home", start: at(20, 0), end: at(0, 0), workingTime: { start: 0, end: 1000 }, maxVisits: 3 },
        { id: "hub", start: at(0, 0), workingTime: { start: 0, end: 1000 }, maxVisits: 3 },
      ],
    };
    const solution = solve(problem);
    expect(solution.dropped).toEqual([]);
    for (const route of solution.routes) expect(route.stops.length).toBeLessThanOrEqual(3);
    const home = solution.routes.find((r) => r.vehicleId === "home")!;
    // From x = 20 the first leg goes to the nearest visit of the route, not from the hub.
    expect(home.stops[0]!.distance).toBe(20 - Math.max(...home.stops.map((s) => Number(s.visitId.slice(1)) + 10)));
    expect(checkSolution(problem, solution).violations).toEqual([]);

    // The checker catches a route that ignores either rule.
    const tampered = structuredClone(solution);
    const moved = tampered.routes.find((r) => r.vehicleId === "hub")!.stops.pop()!;
    tampered.routes.find((r) => r.vehicleId === "home")!.stops.push(moved);
    expect(checkSolution(problem, tampered).violations.join("\n")).toMatch(/home: exceeds its maximum visits/);
  });
});
