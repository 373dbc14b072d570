import { describe, expect, it } from "vitest";
import { checkSolution } from "#shared/routing/check";
import { constructByRegret } from "#shared/routing/construct";
import { buildInstance } from "#shared/routing/instance";
import { Moves } from "#shared/routing/local-search";
import { euclideanTravel } from "#shared/routing/matrix";
import type { RoutingProblem, RoutingSolution, RoutingVisit } from "#shared/routing/model";
import { Solution } from "#shared/routing/solution";
import { solveRouting } from "#shared/routing/solver";
import { randomProblem } from "./random-problem.ts";

const at = (x: number, y = 0) => ({ lat: y, lng: x });
const visit = (id: string, x: number, extra: Partial<RoutingVisit> = {}): RoutingVisit => ({ id, location: at(x), visitTime: 1, ...extra });
const solve = (problem: RoutingProblem, seed = 1, objective: "distance" | "hierarchical" = "distance") =>
  solveRouting(problem, { seed, timeLimitMs: Infinity, maxIterations: 1000, objective });
const order = (solution: RoutingSolution, vehicleId: string) =>
  solution.routes.find((r) => r.vehicleId === vehicleId)?.stops.map((s) => s.visitId) ?? [];

describe("pickup-and-delivery pairs", () => {
  it("serves the pickup before the delivery on one vehicle even when the naive order is the other way round", () => {
    for (const seed of [1, 2, 3]) {
      // The delivery lies on the way out, the pickup beyond it: the shortest tour would deliver first.
      const problem: RoutingProblem = {
        travel: euclideanTravel(),
        visits: [
          visit("drop", 5),
          visit("far", 10, { demand: [4] }),
          visit("take", 20, { demand: [6] }),
          visit("drop-2", 3, { pickupVisitId: "take" }),
        ].map((v) => (v.id === "drop" ? { ...v, pickupVisitId: "far" } : v)),
        vehicles: [
          { id: "a", start: at(0), workingTime: { start: 0, end: 1000 }, capacity: [10] },
          { id: "b", start: at(0), workingTime: { start: 0, end: 1000 }, capacity: [10] },
        ],
      };
      for (const objective of ["distance", "hierarchical"] as const) {
        const solution = solve(problem, seed, objective);
        expect(solution.dropped).toEqual([]);
        expect(checkSolution(problem, solution).violations).toEqual([]);
        const route = solution.routes.find((r) => r.stops.some((s) => s.visitId === "far"))!.stops.map((s) => s.visitId);
        expect(route.indexOf("far")).toBeLessThan(route.indexOf("drop"));
        const other = solution.routes.find((r) => r.stops.some((s) => s.visitId === "take"))!.stops.map((s) => s.visitId);
        expect(other.indexOf("take")).toBeLessThan(other.indexOf("drop-2"));
      }
    }
  });

  it("keeps capacity at every point: two pairs of 6 on a vehicle of 10 are carried one after the other", () => {
    const problem: RoutingProblem = {
      travel: euclideanTravel(),
      visits: [
        visit("p1", 1, { demand: [6] }),
        visit("p2", 2, { demand: [6] }),
        visit("d1", 3, { pickupVisitId: "p1" }),
        visit("d2", 4, { pickupVisitId: "p2" }),
      ],
      vehicles: [{ id: "van", start: at(0), workingTime: { start: 0, end: 1000 }, capacity: [10] }],
    };
    const solution = solve(problem);
    expect(solution.dropped).toEqual([]);
    expect(checkSolution(problem, solution).violations).toEqual([]);
    const route = order(solution, "van");
    // Never both loads on board: each delivery comes before the other pickup.
    const [first, second] = route.indexOf("p1") < route.indexOf("p2") ? ["1", "2"] : ["2", "1"];
    expect(route.indexOf(`d${first}`)).toBeLessThan(route.indexOf(`p${second}`));
    // Ordinary visits load at the start: a box of 5 that can only be served late is still on board
    // during the pair (5 + 6 > 10), so one of them must go — the box (one visit against two).
    const full: RoutingProblem = {
      ...problem,
      visits: [
        visit("p1", 1, { demand: [6], timeWindows: [{ start: 0, end: 100 }] }),
        visit("d1", 3, { pickupVisitId: "p1", timeWindows: [{ start: 0, end: 100 }] }),
        visit("box", 9, { demand: [5], timeWindows: [{ start: 500, end: 600 }] }),
      ],
    };
    const partial = solve(full);
    expect(checkSolution(full, partial).violations).toEqual([]);
    expect(partial.dropped).toEqual([{ visitId: "box", reason: "could not be fitted" }]);
    // With room for both, all three are served.
    const roomy = { ...full, vehicles: [{ ...full.vehicles[0]!, capacity: [11] }] };
    expect(solve(roomy).dropped).toEqual([]);
  });

  it("drops a pair together when it cannot fit, with a reason for each visit", () => {
    const problem: RoutingProblem = {
      travel: euclideanTravel(),
      visits: [
        visit("ok", 2),
        // The delivery's window closes before the pickup's opens: no order serves both.
        visit("p", 5, { timeWindows: [{ start: 100, end: 200 }] }),
        visit("d", 6, { pickupVisitId: "p", timeWindows: [{ start: 0, end: 50 }] }),
        // A pair whose pickup needs a tag no vehicle has: the delivery goes too.
        visit("tagged", 3, { requiredTags: ["crane"] }),
        visit("after-tagged", 4, { pickupVisitId: "tagged" }),
      ],
      vehicles: [{ id: "van", start: at(0), workingTime: { start: 0, end: 1000 } }],
    };
    const solution = solve(problem);
    expect(order(solution, "van")).toEqual(["ok"]);
    expect(solution.dropped).toEqual([
      { visitId: "p", reason: "could not be fitted" },
      { visitId: "d", reason: "could not be fitted" },
      { visitId: "tagged", reason: "no vehicle with matching tags" },
      { visitId: "after-tagged", reason: "pickup and delivery cannot both be served" },
    ]);
    expect(checkSolution(problem, solution).violations).toEqual([]);
  });

  it("puts both visits of a pair on a vehicle that may serve both", () => {
    const problem: RoutingProblem = {
      travel: euclideanTravel(),
      visits: [visit("p", 5, { requiredTags: ["cold"] }), visit("d", 6, { pickupVisitId: "p", requiredTags: ["lift"] }), visit("x", 1)],
      vehicles: [
        { id: "cold", start: at(0), workingTime: { start: 0, end: 1000 }, tags: ["cold"] },
        { id: "both", start: at(0), workingTime: { start: 0, end: 1000 }, tags: ["cold", "lift"], fixedCost: 5 },
      ],
    };
    const solution = solve(problem);
    expect(order(solution, "both")).toEqual(expect.arrayContaining(["p", "d"]));
    expect(checkSolution(problem, solution).violations).toEqual([]);
  });

  it("rejects invalid pairs", () => {
    const vehicles = [{ id: "van", start: at(0), workingTime: { start: 0, end: 100 } }];
    const travel = euclideanTravel();
    expect(() => solve({ travel, vehicles, visits: [visit("a", 1, { pickupVisitId: "nope" })] })).toThrow(/unknown pickup/);
    expect(() => solve({ travel, vehicles, visits: [visit("a", 1, { pickupVisitId: "a" })] })).toThrow(/itself/);
    expect(() =>
      solve({ travel, vehicles, visits: [visit("a", 1), visit("b", 2, { pickupVisitId: "a" }), visit("c", 3, { pickupVisitId: "a" })] }),
    ).toThrow(/two pairs/);
  });

  it("the checker catches a delivery before its pickup, a split pair, half a pair and an overload in between", () => {
    const problem: RoutingProblem = {
      travel: euclideanTravel(),
      visits: [visit("p", 1, { demand: [8] }), visit("d", 2, { pickupVisitId: "p" }), visit("o", 3, { demand: [3] })],
      vehicles: [
        { id: "a", start: at(0), workingTime: { start: 0, end: 1000 }, capacity: [10] },
        { id: "b", start: at(0), workingTime: { start: 0, end: 1000 }, capacity: [10] },
      ],
    };
    const solution = solve(problem);
    expect(checkSolution(problem, solution).violations).toEqual([]);
    const route = solution.routes.find((r) => r.stops.some((s) => s.visitId === "p"))!;

    const swapped = structuredClone(solution);
    const stops = swapped.routes.find((r) => r.vehicleId === route.vehicleId)!.stops;
    const ip = stops.findIndex((s) => s.visitId === "p");
    const id = stops.findIndex((s) => s.visitId === "d");
    [stops[ip]!.visitId, stops[id]!.visitId] = [stops[id]!.visitId, stops[ip]!.visitId];
    expect(checkSolution(problem, swapped).violations.join("\n")).toMatch(/d: delivered before its pickup p/);

    const halved = structuredClone(solution);
    const halvedStops = halved.routes.find((r) => r.vehicleId === route.vehicleId)!.stops;
    halvedStops.splice(
      halvedStops.findIndex((s) => s.visitId === "d"),
      1,
    );
    halved.dropped.push({ visitId: "d", reason: "could not be fitted" });
    expect(checkSolution(problem, halved).violations.join("\n")).toMatch(/d: pair with p is served only in part/);

    // o (3) on board from the start, then the pickup's 8: 11 > 10 before o is served.
    const overloaded: RoutingSolution = {
      ...solution,
      dropped: [],
      routes: [{ ...route, stops: ["p", "d", "o"].map((visitId) => ({ ...route.stops[0]!, visitId })) }],
    };
    expect(checkSolution(problem, overloaded).violations.join("\n")).toMatch(/load on board 11 after p exceeds capacity/);
  });

  it("random instances with pairs: every solution passes the checker", () => {
    for (const seed of [1, 2, 3, 4]) {
      const base = randomProblem(seed, 30);
      // Pair visit 2k+1 as the delivery of visit 2k, for half of the visits.
      const visits = base.visits.map((v, i) => (i % 4 === 1 ? { ...v, pickupVisitId: base.visits[i - 1]!.id } : v));
      const problem = { ...base, visits };
      for (const objective of ["distance", "hierarchical"] as const) {
        const solution = solveRouting(problem, { seed, timeLimitMs: Infinity, maxIterations: 300, objective });
        expect(checkSolution(problem, solution).violations).toEqual([]);
        const dropped = new Set(solution.dropped.map((d) => d.visitId));
        for (const v of visits) if (v.pickupVisitId) expect(dropped.has(v.id)).toBe(dropped.has(v.pickupVisitId));
      }
    }
  });
});

/** A random day of `visits` whose every third visit is the delivery of the one before, planned by regret insertion. */
function pairedPlan(seed: number, visits: number) {
  const base = randomProblem(seed, visits);
  const problem = { ...base, visits: base.visits.map((v, i) => (i % 3 === 1 ? { ...v, pickupVisitId: base.visits[i - 1]!.id } : v)) };
  const instance = buildInstance(problem);
  const solution = new Solution(instance, { vehicle: 1000, underload: 7 });
  constructByRegret(solution);
  return { instance, solution };
}

describe("moves on routes with pairs", () => {
  it("every relocate, swap and 2-opt* the local search would accept keeps each pair on one route, pickup first, and the load within capacity everywhere", () => {
    let accepted = 0;
    for (const seed of [11, 12, 13, 14, 15, 16]) {
      const { instance, solution } = pairedPlan(seed, 24);
      const moves = new Moves(solution);
      const start = solution.snapshot();
      const holds = () => {
        for (const route of solution.routes) {
          expect(route.feasible).toBe(true);
          // The profile replayed by hand: ordinary demand from the start, each pair from pickup to delivery.
          const { dims, demand, pairLoad, capacity } = instance;
          const onBoard = Array.from({ length: dims }, (_, d) =>
            route.nodes.reduce((sum, node) => sum + (demand[node * dims + d] ?? 0), 0),
          );
          for (const node of route.nodes) {
            for (let d = 0; d < dims; d++) {
              onBoard[d] = onBoard[d]! - (demand[node * dims + d] ?? 0) + (node < instance.visitCount ? pairLoad[node * dims + d]! : 0);
              expect(onBoard[d]!).toBeLessThanOrEqual(capacity[route.vehicle * dims + d]! + 1e-9);
            }
          }
        }
        for (let v = 0; v < instance.visitCount; v++) {
          const u = instance.partner[v]!;
          if (u < 0 || !instance.isPickup[v]) continue;
          expect(solution.routeOf[u]).toBe(solution.routeOf[v]);
          if (solution.routeOf[v]! >= 0) expect(solution.positionOf[v]!).toBeLessThan(solution.positionOf[u]!);
        }
      };
      holds();
      const routed = [...instance.routable].filter((v) => solution.routeOf[v]! >= 0);
      for (const u of routed) {
        for (const v of routed) {
          if (solution.routeOf[u] === solution.routeOf[v]) continue;
          const tries: Array<[number, () => void]> = [
            [moves.relocateDelta(u, v, false), () => moves.applyRelocate(u, v, false)],
            [moves.relocateDelta(u, v, true), () => moves.applyRelocate(u, v, true)],
            [moves.swapDelta(u, v), () => moves.applySwap(u, v)],
            [moves.twoOptStarDelta(u, v), () => moves.applyTwoOptStar(u, v)],
          ];
          for (const [delta, apply] of tries) {
            if (delta === Infinity) continue;
            accepted++;
            apply();
            holds();
            solution.restore(start);
          }
        }
      }
    }
    expect(accepted).toBeGreaterThan(40);
  });

  it("the pair insertion answers the cheapest feasible pickup and delivery positions and windows, searched exhaustively, whatever the bound", () => {
    let compared = 0;
    let found = 0;
    for (const seed of [21, 22, 23, 24, 25, 26]) {
      const { instance, solution } = pairedPlan(seed, 18);
      const pickups = [...instance.routable].filter((v) => instance.isPickup[v] && solution.routeOf[v]! >= 0);
      for (const p of pickups) {
        const planned = solution.snapshot();
        solution.removeWithPartner(p);
        const without = solution.snapshot();
        for (let r = 0; r < solution.routes.length; r++) {
          const route = solution.routes[r]!;
          if (instance.compatible[p * instance.vehicleCount + route.vehicle] !== 1) continue;
          if (instance.compatible[instance.partner[p]! * instance.vehicleCount + route.vehicle] !== 1) continue;
          // Every pickup position, delivery position and pair of windows, inserted and summarised afresh.
          const before = route.cost;
          const slots = route.nodes.length;
          let cheapest = Infinity;
          for (let position = 1; position < slots; position++) {
            for (let position2 = position + 1; position2 <= slots; position2++) {
              for (let window = instance.windowOffset[p]!; window < instance.windowOffset[p + 1]!; window++) {
                const q = instance.partner[p]!;
                for (let window2 = instance.windowOffset[q]!; window2 < instance.windowOffset[q + 1]!; window2++) {
                  solution.insertPair(p, r, { cost: 0, position, window, position2, window2 });
                  const inserted = solution.routes[r]!;
                  if (inserted.feasible && inserted.visitCount <= instance.maxVisits[inserted.vehicle]!)
                    cheapest = Math.min(cheapest, inserted.cost - before);
                  solution.restore(without);
                }
              }
            }
          }
          const insertion = { cost: 0, position: 0, window: 0 };
          const answered = route.findPairInsertion(p, Infinity, undefined, insertion);
          compared++;
          expect(answered).toBe(cheapest < Infinity);
          if (!answered) continue;
          found++;
          expect(insertion.cost).toBeCloseTo(cheapest, 6);
          // The answer holds when applied, and a bound just above it finds it again, one at it finds nothing.
          solution.insertPair(p, r, insertion);
          expect(solution.routes[r]!.feasible).toBe(true);
          expect(solution.routes[r]!.cost - before).toBeCloseTo(cheapest, 6);
          solution.restore(without);
          expect(route.findPairInsertion(p, cheapest + 1e-3, undefined, { cost: 0, position: 0, window: 0 })).toBe(true);
          expect(route.findPairInsertion(p, cheapest - 1e-3, undefined, { cost: 0, position: 0, window: 0 })).toBe(false);
        }
        solution.restore(planned);
      }
    }
    expect(compared).toBeGreaterThan(40);
    expect(found).toBeGreaterThan(20);
  });
});
