import { describe, expect, it } from "vitest";
import { checkSolution } from "#shared/routing/check";
import type { RoutingSolution } from "#shared/routing/model";
import { solveRouting } from "#shared/routing/solver";
import { randomProblem } from "./random-problem.ts";

const problem = randomProblem(11, 20);
const solved = solveRouting(problem, { maxIterations: 50, timeLimitMs: Infinity });
const tampered = (change: (solution: RoutingSolution) => void): string[] => {
  const copy = structuredClone(solved);
  change(copy);
  return checkSolution(problem, copy).violations;
};

describe("checkSolution", () => {
  it("accepts the solver's solution and recomputes its distance", () => {
    const { violations, distance } = checkSolution(problem, solved);
    expect(violations).toEqual([]);
    expect(distance).toBeCloseTo(solved.totals.distance, 6);
  });

  it("catches a service start outside every window", () => {
    expect(tampered((s) => (s.routes[0]!.stops[0]!.start = -100)).join()).toMatch(/outside its windows/);
  });

  it("catches a visit served twice or neither served nor dropped", () => {
    expect(tampered((s) => s.routes[0]!.stops.push(structuredClone(s.routes[0]!.stops[0]!))).join()).toMatch(/appears 2 times/);
    expect(tampered((s) => s.routes[0]!.stops.pop()).join()).toMatch(/appears 0 times/);
  });

  it("catches overload, a late return and a missing break", () => {
    const heavy = { ...problem, visits: problem.visits.map((visit) => ({ ...visit, demand: [100, 0] })) };
    expect(checkSolution(heavy, solved).violations.join()).toMatch(/exceeds capacity/);
    const shortDay = { ...problem, vehicles: problem.vehicles.map((vehicle) => ({ ...vehicle, workingTime: { start: 0, end: 100 } })) };
    expect(checkSolution(shortDay, solved).violations.join()).toMatch(/after its working time/);
    const withBreak = solved.routes.findIndex((route) => route.breaks.length > 0);
    expect(withBreak).toBeGreaterThanOrEqual(0);
    expect(tampered((s) => s.routes[withBreak]!.breaks.pop()).join()).toMatch(/takes 1 of 2 breaks/);
  });
});
