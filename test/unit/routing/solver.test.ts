import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkSolution } from "#shared/routing/check";
import { greatCircleTravel } from "#shared/routing/matrix";
import type { RoutingProblem, RoutingVehicle, RoutingVisit, SolveOptions } from "#shared/routing/model";
import { solveRouting } from "#shared/routing/solver";
import { randomProblem } from "./random-problem.ts";

const HUB = { lat: 52.37, lng: 4.9 };
/** A point `northKm` and `eastKm` from the hub. */
const near = (northKm: number, eastKm: number) => ({
  lat: HUB.lat + northKm / 111.2,
  lng: HUB.lng + eastKm / (111.2 * Math.cos((HUB.lat * Math.PI) / 180)),
});
const DAY = { start: 8 * 60, end: 17 * 60 };
const quick: SolveOptions = { maxIterations: 200, timeLimitMs: Infinity, seed: 3 };

function vehicle(id: string, extra: Partial<RoutingVehicle> = {}): RoutingVehicle {
  return { id, start: HUB, workingTime: DAY, capacity: [100, 10], ...extra };
}

function visit(id: string, extra: Partial<RoutingVisit> = {}): RoutingVisit {
  return { id, location: near(2, 2), visitTime: 10, demand: [5, 1], ...extra };
}

function solveChecked(problem: RoutingProblem, options: SolveOptions = quick) {
  const solution = solveRouting(problem, options);
  expect(checkSolution(problem, solution).violations).toEqual([]);
  return solution;
}

const reasonOf = (solution: ReturnType<typeof solveRouting>, id: string) => solution.dropped.find((d) => d.visitId === id)?.reason;

describe("solveRouting drop reasons", () => {
  it("drops visits with bad coordinates", () => {
    const solution = solveChecked({
      vehicles: [vehicle("van")],
      visits: [visit("ok"), visit("nan", { location: { lat: Number.NaN, lng: 4 } }), visit("pole", { location: { lat: 95, lng: 4 } })],
    });
    expect(reasonOf(solution, "nan")).toBe("bad coordinates");
    expect(reasonOf(solution, "pole")).toBe("bad coordinates");
    expect(solution.routes[0]!.stops.map((s) => s.visitId)).toEqual(["ok"]);
  });

  it("drops visits no vehicle has the tags for", () => {
    const solution = solveChecked({
      vehicles: [vehicle("van", { tags: ["ladder"] }), vehicle("truck", { tags: ["crane", "fridge"] })],
      visits: [visit("crane+ladder", { requiredTags: ["crane", "ladder"] }), visit("crane", { requiredTags: ["crane"] })],
    });
    expect(reasonOf(solution, "crane+ladder")).toBe("no vehicle with matching tags");
    expect(solution.routes.map((r) => [r.vehicleId, r.stops.map((s) => s.visitId)])).toEqual([["truck", ["crane"]]]);
  });

  it("drops visits heavier than every vehicle with the right tags can carry, in any dimension", () => {
    const solution = solveChecked({
      vehicles: [vehicle("small", { tags: ["fridge"], capacity: [100, 10] }), vehicle("big", { capacity: [1000, 100] })],
      visits: [
        visit("bulky", { demand: [50, 11], requiredTags: ["fridge"] }),
        visit("heavy", { demand: [1001, 1] }),
        visit("fine", { demand: [900, 90] }),
      ],
    });
    expect(reasonOf(solution, "bulky")).toBe("exceeds every vehicle's capacity");
    expect(reasonOf(solution, "heavy")).toBe("exceeds every vehicle's capacity");
    expect(reasonOf(solution, "fine")).toBeUndefined();
  });

  it("drops visits whose windows miss every working time", () => {
    const solution = solveChecked({
      vehicles: [vehicle("early", { workingTime: { start: 360, end: 600 } }), vehicle("day")],
      visits: [
        visit("night", { timeWindows: [{ start: 1100, end: 1200 }] }),
        visit("too long", { visitTime: 600 }),
        visit("second window", {
          timeWindows: [
            { start: 0, end: 60 },
            { start: 900, end: 960 },
          ],
        }),
      ],
    });
    expect(reasonOf(solution, "night")).toBe("outside every working time");
    expect(reasonOf(solution, "too long")).toBe("outside every working time");
    expect(reasonOf(solution, "second window")).toBeUndefined();
  });

  it("drops what no route can take as 'could not be fitted', keeping as many visits as possible", () => {
    const solution = solveChecked({
      vehicles: [vehicle("van", { maxVisits: 3 })],
      visits: [1, 2, 3, 4].map((i) => visit(`v${i}`, { location: near(i, 0) })),
    });
    expect(solution.routes[0]!.stops).toHaveLength(3);
    expect(solution.dropped).toEqual([expect.objectContaining({ reason: "could not be fitted" })]);
  });

  it("solves the hierarchical objective when every vehicle has no fixed cost and not every visit fits", () => {
    // Vehicles of cost 0 give the fleet phase nothing to save: it must stop, not fail.
    const solution = solveChecked(
      {
        vehicles: [vehicle("a", { fixedCost: 0, maxVisits: 2 }), vehicle("b", { fixedCost: 0, maxVisits: 2 })],
        visits: [1, 2, 3, 4, 5].map((i) => visit(`v${i}`, { location: near(i, 0) })),
      },
      { ...quick, objective: "hierarchical" },
    );
    expect(solution.routes.flatMap((route) => route.stops)).toHaveLength(4);
    expect(solution.dropped.map((d) => d.reason)).toEqual(["could not be fitted"]);
  });

  it("cannot serve two visits with the same short window far apart with one vehicle", () => {
    const window = [{ start: 600, end: 605 }];
    const solution = solveChecked({
      vehicles: [vehicle("van")],
      visits: [
        visit("north", { location: near(10, 0), timeWindows: window }),
        visit("south", { location: near(-10, 0), timeWindows: window }),
      ],
    });
    expect(solution.routes[0]!.stops).toHaveLength(1);
    expect(solution.dropped.map((d) => d.reason)).toEqual(["could not be fitted"]);
  });
});

describe("solveRouting field-operation rules", () => {
  it("takes the break inside its window, where the vehicle is", () => {
    const solution = solveChecked({
      vehicles: [vehicle("van", { breaks: [{ earliestStart: 720, latestEnd: 780, duration: 30 }] })],
      visits: [
        visit("morning", { location: near(3, 0), timeWindows: [{ start: 600, end: 690 }] }),
        visit("afternoon", { location: near(0, 3), timeWindows: [{ start: 750, end: 800 }] }),
      ],
    });
    const [route] = solution.routes;
    expect(route!.breaks).toHaveLength(1);
    const [taken] = route!.breaks;
    expect(taken!.start).toBeGreaterThanOrEqual(720);
    expect(taken!.end).toBeLessThanOrEqual(780);
    expect(taken!.end - taken!.start).toBe(30);
    expect(route!.stops[taken!.afterStop + 1]!.arrival).toBeGreaterThanOrEqual(taken!.end);
  });

  it("uses a later window when the first cannot be reached", () => {
    // 20 km × 1.3 road factor at 40 km/h is 39 minutes: the 8:00–8:10 window is out of reach.
    const solution = solveChecked({
      vehicles: [vehicle("van")],
      visits: [
        visit("far", {
          location: near(20, 0),
          timeWindows: [
            { start: 480, end: 490 },
            { start: 900, end: 960 },
          ],
        }),
      ],
    });
    const stop = solution.routes[0]!.stops[0]!;
    expect(stop.start).toBeGreaterThanOrEqual(900);
    expect(stop.start).toBeLessThanOrEqual(960);
    expect(stop.waiting).toBe(0);
  });

  it("ends an open route at the last visit", () => {
    const problem = {
      vehicles: [vehicle("van", { returnToEnd: false })],
      visits: [visit("a", { location: near(5, 0) }), visit("b", { location: near(10, 0) })],
    };
    const [route] = solveChecked(problem).routes;
    expect(route!.stops.map((s) => s.visitId)).toEqual(["a", "b"]);
    expect(route!.arrival).toBeCloseTo(route!.stops[1]!.departure, 9);
    expect(route!.distance).toBeCloseTo(route!.stops[0]!.distance + route!.stops[1]!.distance, 6);
    expect(route!.distance).toBeCloseTo(10 * 1.3 * 1000, -2);
  });

  it("respects maximum distance and duration, and reports times in minutes and distances in metres", () => {
    const visits = [visit("near", { location: near(1, 0) }), visit("far", { location: near(0, 30) })];
    const short = solveChecked({ vehicles: [vehicle("van", { maxDistance: 10_000 })], visits });
    expect(reasonOf(short, "far")).toBe("could not be fitted");
    const brief = solveChecked({ vehicles: [vehicle("van", { maxDuration: 60 })], visits });
    expect(reasonOf(brief, "far")).toBe("could not be fitted");
    const [route] = brief.routes;
    // 1 km each way × 1.3 at 40 km/h = 1.95 minutes each way, plus 10 minutes of service.
    expect(route!.distance).toBeCloseTo(2600, 0);
    expect(route!.duration).toBeCloseTo(13.9, 2);
  });

  it("loads a second vehicle when one dimension is full, and reports cumulative loads", () => {
    const solution = solveChecked(
      {
        vehicles: [vehicle("a", { capacity: [100, 5] }), vehicle("b", { capacity: [100, 5] })],
        visits: [1, 2, 3, 4].map((i) => visit(`v${i}`, { demand: [10, 2] })),
      },
      { ...quick, objective: "hierarchical" },
    );
    expect(solution.routes).toHaveLength(2);
    for (const route of solution.routes) {
      expect(route.load).toEqual([20, 4]);
      expect(route.stops.at(-1)!.load).toEqual([20, 4]);
    }
  });

  it("prefers the vehicle with the lower fixed cost and reports its shortfall below the soft minimum", () => {
    const solution = solveChecked(
      {
        vehicles: [vehicle("pricey", { fixedCost: 5 }), vehicle("cheap", { fixedCost: 1, minCapacity: [50, 0] })],
        visits: [visit("a"), visit("b", { location: near(1, 1) })],
      },
      { ...quick, objective: "hierarchical" },
    );
    expect(solution.routes.map((r) => r.vehicleId)).toEqual(["cheap"]);
    expect(solution.routes[0]!.underload).toBe(40);
    expect(solution.totals).toMatchObject({ vehicles: 1, visits: 2, fixedCost: 1 });
  });

  it("measures great-circle distance in metres with the road factor", () => {
    const provider = greatCircleTravel(1.3);
    const locations = [
      { lat: 0, lng: 0 },
      { lat: 1, lng: 0 },
    ];
    const distances = provider.distances(locations);
    expect(distances[1]).toBeCloseTo(111_195 * 1.3, -2);
    expect(provider.travelMinutes(distances, 60, locations)[1]).toBeCloseTo((111.195 * 1.3 * 60) / 60, 1);
  });
});

describe("solveRouting search", () => {
  it("returns feasible solutions on random problems with breaks, windows, limits and open ends", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.constantFrom("distance" as const, "hierarchical" as const),
        (seed, objective) => {
          const problem = randomProblem(seed, 25);
          const solution = solveRouting(problem, { ...quick, seed, objective, maxIterations: 100 });
          expect(checkSolution(problem, solution).violations).toEqual([]);
        },
      ),
      { numRuns: 15 },
    );
  });

  it("is deterministic for a given seed and iteration limit", () => {
    const problem = randomProblem(42, 30);
    const first = solveRouting(problem, { ...quick, seed: 9 });
    const second = solveRouting(problem, { ...quick, seed: 9 });
    expect(second).toEqual(first);
  });

  it("uses no more vehicles under the hierarchical objective than under the distance one, and fewer where it can", () => {
    // Over many small days rather than one: on a tight 30-visit day either search may leave one visit more out
    // at 200 iterations, depending on the random stream (the hierarchical one spends half of them on the fleet).
    let fewer = 0;
    let droppedHierarchical = 0;
    let droppedDistance = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const problem = randomProblem(seed, 14);
      const hierarchical = solveChecked(problem, { ...quick, objective: "hierarchical" });
      const distance = solveChecked(problem, { ...quick, objective: "distance" });
      droppedHierarchical += hierarchical.dropped.length;
      droppedDistance += distance.dropped.length;
      if (hierarchical.dropped.length !== distance.dropped.length) continue;
      expect(hierarchical.routes.length).toBeLessThanOrEqual(distance.routes.length);
      if (hierarchical.routes.length < distance.routes.length) fewer++;
    }
    expect(droppedHierarchical).toBeLessThanOrEqual(droppedDistance);
    expect(fewer).toBeGreaterThan(0);
  });

  it("stops at the time limit of the injected clock", () => {
    let clock = 0;
    const problem = randomProblem(8, 20);
    const solution = solveChecked(problem, { timeLimitMs: 100, now: () => (clock += 1) });
    expect(solution.iterations).toBeGreaterThan(0);
    expect(solution.iterations).toBeLessThan(100);
  });
});
