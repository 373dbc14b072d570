import { describe, expect, it } from "vitest";
import { cheapenFleet, type FleetPhaseEnd, mayCheapen, minimiseFleet, Repair } from "#shared/routing/fleet-min";
import { buildInstance } from "#shared/routing/instance";
import { euclideanTravel } from "#shared/routing/matrix";
import type { RoutingProblem } from "#shared/routing/model";
import { Penalties, PenalisedStep } from "#shared/routing/penalised";
import { Random } from "#shared/routing/random";
import { RuinRecreate } from "#shared/routing/ruin-recreate";
import { Budget, Incumbent } from "#shared/routing/search";
import { Solution } from "#shared/routing/solution";
import { annealRandomPlan, expectFeasibleWithEveryVisitOnce } from "./random-problem.ts";

/**
 * Vehicle "tagged" (fixed cost 2, so the fleet phase empties its route first) is the only one that may serve the
 * six tagged visits; "plain-1" and "plain-2" share twenty plain visits. The tagged route can never be emptied;
 * either plain route can.
 */
function problem(): RoutingProblem {
  const at = (i: number) => ({ lat: 10 + (i % 5) * 3, lng: 10 + Math.floor(i / 5) * 3 });
  const day = { start: 0, end: 1000 };
  return {
    travel: euclideanTravel(),
    visits: [
      ...Array.from({ length: 6 }, (_, i) => ({ id: `tagged-${i}`, location: at(i), visitTime: 5, requiredTags: ["x"] })),
      ...Array.from({ length: 20 }, (_, i) => ({ id: `plain-${i}`, location: at(i + 6), visitTime: 5 })),
    ],
    vehicles: [
      { id: "tagged", start: { lat: 0, lng: 0 }, workingTime: day, tags: ["x"], fixedCost: 2 },
      { id: "plain-1", start: { lat: 0, lng: 0 }, workingTime: day },
      { id: "plain-2", start: { lat: 0, lng: 0 }, workingTime: day },
    ],
  };
}

/** Routes the first `count` visits: the tagged ones on "tagged", the plain ones ten on "plain-1", the rest on "plain-2". */
function assignFirst(solution: Solution, count: number): void {
  const { instance } = solution;
  for (let v = 0; v < count; v++) {
    const r = v < 6 ? 0 : v < 16 ? 1 : 2;
    solution.insert(v, r, solution.routes[r]!.nodes.length - 1, instance.windowOffset[v]!);
  }
}

/** The problem with its first `assigned` visits routed (`assignFirst`; default all). */
function planned(routing: RoutingProblem, assigned?: number): Solution {
  const instance = buildInstance(routing);
  const solution = new Solution(instance, { vehicle: 1_000_000, underload: 0 });
  assignFirst(solution, assigned ?? instance.visitCount);
  return solution;
}

/** Runs the fleet phase on `solution` for up to half of `iterations`, from an incumbent taken of it now. */
function runFleetPhase(
  solution: Solution,
  seed: number,
  iterations = 40_000,
): { incumbent: Incumbent; budget: Budget; end: FleetPhaseEnd } {
  const random = new Random(seed);
  const incumbent = new Incumbent(solution);
  const budget = new Budget(() => 0, Infinity, iterations);
  const end = minimiseFleet(solution, new RuinRecreate(solution, random), budget, 0.5, incumbent, random);
  return { incumbent, budget, end };
}

describe("fleet minimisation", () => {
  it("gives up on a route that cannot be emptied and empties another one instead of spending its whole share there", () => {
    // Every vehicle used: the tagged visits on "tagged", the plain ones split between the plain vehicles.
    const solution = planned(problem());
    expect(solution.vehiclesUsed).toBe(3);
    // 20,000 iterations, half of them for the fleet phase; a route is given up after 2,000 without progress.
    const { budget } = runFleetPhase(solution, 1, 20_000);

    expect(solution.unassigned.size).toBe(0);
    expect(solution.vehiclesUsed).toBeLessThan(3);
    expect(solution.routes[0]!.visitCount).toBeGreaterThanOrEqual(6); // the tagged route stays
    expect(budget.iterations).toBeLessThan(10_000); // it ended on its own, before its share of the budget
  });

  it("with the penalised step as the repair's second chance (solver.ts FLEET_PENALISED): empties a route, feasible, no vehicle opened", () => {
    for (const seed of [1, 2]) {
      // As in the test above: either plain route can be emptied, the tagged one cannot.
      const solution = planned(problem());
      const random = new Random(seed);
      const incumbent = new Incumbent(solution);
      const budget = new Budget(() => 0, Infinity, 20_000);
      const ruinRecreate = new RuinRecreate(solution, random);
      const step = new PenalisedStep(solution, new Penalties(1, 1), random);
      let calls = 0;
      const penalised = (removed: readonly number[]) => {
        calls++;
        const used = solution.vehiclesUsed;
        step.insertAndImprove(ruinRecreate.order([...solution.unassigned]), removed);
        if (solution.unassigned.size > 0) ruinRecreate.recreate([...solution.unassigned], false);
        expect(solution.vehiclesUsed).toBeLessThanOrEqual(used);
        for (const route of solution.routes) expect(route.feasible).toBe(true);
      };
      minimiseFleet(solution, ruinRecreate, budget, 0.5, incumbent, random, penalised);
      expect(calls).toBeGreaterThan(0);
      expect(solution.unassigned.size).toBe(0);
      expect(solution.vehiclesUsed).toBeLessThan(3);
      for (const route of solution.routes) expect(route.feasible).toBe(true);
    }
  }, 60_000);

  it("keeps every visit and a feasible plan when no route can be emptied", () => {
    const routing = problem();
    // Each vehicle takes at most 10 visits: three routes are needed for 26 visits.
    routing.vehicles = routing.vehicles.map((vehicle) => ({ ...vehicle, maxVisits: 10 }));
    const solution = planned(routing);
    const { budget } = runFleetPhase(solution, 2);
    expect(solution.vehiclesUsed).toBe(3);
    expect(solution.unassigned.size).toBe(0);
    expect(budget.iterations).toBeLessThan(20_000); // three routes tried and given up, then the phase ended
    for (const route of solution.routes) expect(route.feasible).toBe(true);
  });

  it("ends the phase after two routes in a row whose visits mostly never found room at once: the smaller fleet lacks room", () => {
    const routing = problem();
    // No tags, at most 10 visits a vehicle: whichever route is emptied, 6 of its visits stay out at best.
    routing.visits = routing.visits.map(({ requiredTags: _, ...visit }) => visit);
    routing.vehicles = routing.vehicles.map(({ tags: _, ...vehicle }) => ({ ...vehicle, maxVisits: 10 }));
    const solution = planned(routing);
    const { budget, end } = runFleetPhase(solution, 5);
    expect(solution.vehiclesUsed).toBe(3);
    expect(solution.unassigned.size).toBe(0);
    // Two routes given up (each within twice its patience of 2,000), never a third: three took 6,002 before.
    expect(budget.iterations).toBeLessThan(6_000);
    expect(end).toBe("outOfReach");
    for (const route of solution.routes) expect(route.feasible).toBe(true);
  });

  it("says when the smaller fleet came within reach: three routes given up, each with a visit or two still out", () => {
    const routing = problem();
    // No tags, at most 12 visits a vehicle: two vehicles hold 24 of the 26 visits, so an emptied route of 6–10
    // comes within two visits of fitting (under OUT_OF_REACH), and is given up all the same.
    routing.visits = routing.visits.map(({ requiredTags: _, ...visit }) => visit);
    routing.vehicles = routing.vehicles.map(({ tags: _, ...vehicle }) => ({ ...vehicle, maxVisits: 12 }));
    const solution = planned(routing);
    const { end } = runFleetPhase(solution, 5);
    expect(solution.vehiclesUsed).toBe(3);
    expect(solution.unassigned.size).toBe(0);
    expect(end).toBe("nearMiss");
  });

  it("brings back the visits the first solution left out before it removes a vehicle", () => {
    const routing = problem();
    // At most 10 visits a vehicle: 26 visits fit in three routes, never in two.
    routing.vehicles = routing.vehicles.map((vehicle) => ({ ...vehicle, maxVisits: 10 }));
    // The way regret insertion can leave a tight fleet: three plain visits out, room left on "tagged" and "plain-2".
    const solution = planned(routing, 23);
    expect(solution.unassigned.size).toBe(3);
    const { incumbent } = runFleetPhase(solution, 3);

    // Before, the three left out were the target every smaller fleet had to keep, and the phase ended with them out.
    expect(solution.unassigned.size).toBe(0);
    expect(incumbent.unassigned).toBe(0);
    expect(solution.vehiclesUsed).toBe(3);
    for (const route of solution.routes) expect(route.feasible).toBe(true);
  });

  it("gives up on a visit that fits nowhere after its patience and keeps the fewest left out", () => {
    const routing = problem();
    // 31 visits, three vehicles of at most 10: one visit is always out.
    routing.visits.push(...Array.from({ length: 5 }, (_, i) => ({ id: `extra-${i}`, location: { lat: 25 + i, lng: 25 }, visitTime: 5 })));
    routing.vehicles = routing.vehicles.map((vehicle) => ({ ...vehicle, maxVisits: 10 }));
    const solution = planned(routing, 26);
    expect(solution.unassigned.size).toBe(5);
    const { budget } = runFleetPhase(solution, 4);

    expect(solution.unassigned.size).toBe(1);
    expect(solution.vehiclesUsed).toBe(3);
    // The repair's patience (2,000 iterations), then three routes tried and given up: well within its 20,000.
    expect(budget.iterations).toBeLessThan(20_000);
    for (const route of solution.routes) expect(route.feasible).toBe(true);
  });
});

/**
 * "tagged" may serve "hard" (tag x), "plain" may not; both may serve "easy". "hard" and "easy" are at one place with
 * one 10-minute window and take 50 minutes each, so one van serves only one of them; "plain" also serves "other".
 */
function oneSlot(hardWindow = { start: 100, end: 110 }): RoutingProblem {
  const here = { lat: 3, lng: 4 };
  const day = { start: 0, end: 1000 };
  return {
    travel: euclideanTravel(),
    visits: [
      { id: "hard", location: here, visitTime: 50, requiredTags: ["x"], timeWindows: [hardWindow] },
      { id: "easy", location: here, visitTime: 50, timeWindows: [{ start: 100, end: 110 }] },
      { id: "other", location: { lat: 6, lng: 8 }, visitTime: 5 },
    ],
    vehicles: [
      { id: "tagged", start: { lat: 0, lng: 0 }, workingTime: day, tags: ["x"] },
      { id: "plain", start: { lat: 0, lng: 0 }, workingTime: day },
    ],
  };
}

/** "easy" on "tagged", "other" on "plain", "hard" left out. */
function hardLeftOut(routing: RoutingProblem): Solution {
  const instance = buildInstance(routing);
  const solution = new Solution(instance, { vehicle: 1_000_000, underload: 0 });
  solution.insert(1, 0, 1, instance.windowOffset[1]!);
  solution.insert(2, 1, 1, instance.windowOffset[2]!);
  expect(solution.unassigned).toEqual(new Set([0]));
  return solution;
}

describe("the repair's ejection step (Repair.ejectHardest)", () => {
  it("puts the visit left out in by ejecting the one in its way, which the recreate then moves to another used van", () => {
    const solution = hardLeftOut(oneSlot());
    const random = new Random(1);
    const ruinRecreate = new RuinRecreate(solution, random);
    const repair = new Repair(solution, ruinRecreate, random);

    expect(repair.ejectHardest()).toBe(true);
    expect(solution.routeOf[0]).toBe(0); // "hard" on "tagged"
    expect([...solution.unassigned]).toEqual([1]); // "easy" ejected
    for (const route of solution.routes) expect(route.feasible).toBe(true);

    ruinRecreate.recreate([...solution.unassigned], false);
    expect(solution.unassigned.size).toBe(0);
    expect(solution.routeOf[1]).toBe(1); // "easy" on "plain", beside "other"
    expect(solution.vehiclesUsed).toBe(2);
  });

  it("leaves the plan as it was when no ejection makes room: the visit cannot be reached in its window", () => {
    // 5 units from the start, at 1 a minute: "hard" cannot start by minute 2 on any van.
    const solution = hardLeftOut(oneSlot({ start: 0, end: 2 }));
    const before = solution.routes.map((route) => [...route.nodes]);
    const random = new Random(1);
    const repair = new Repair(solution, new RuinRecreate(solution, random), random);

    expect(repair.ejectHardest()).toBe(false);
    expect(solution.routes.map((route) => [...route.nodes])).toEqual(before);
    expect([...solution.unassigned]).toEqual([0]);
  });

  it("is tried by a stalled repair's step: from 200 steps without a visit fewer out, every 50th (a patience of 2,000)", () => {
    // "hard" fits nowhere, so no step ever leaves a visit fewer out.
    const solution = hardLeftOut(oneSlot({ start: 0, end: 2 }));
    const random = new Random(1);
    const repair = new Repair(solution, new RuinRecreate(solution, random), random);
    repair.restart();
    const budget = new Budget(() => 0, Infinity, Infinity);
    const tries: number[] = [];
    for (let step = 0; step < 400; step++) {
      const before = repair.ejectionTries;
      repair.step(budget);
      if (repair.ejectionTries > before) tries.push(step);
    }
    expect(tries).toEqual([200, 250, 300, 350]);
    expect([...solution.unassigned]).toEqual([0]);
    for (const route of solution.routes) expect(route.feasible).toBe(true);
  });
});

/**
 * Two tagged vans (fixed cost 2) and one plain van (1), at most 13 visits each: the 6 tagged and 20 plain visits
 * need two vans, and the cheapest pair is one tagged and the plain one (3), not both tagged (4).
 */
function twoTaggedVans(): RoutingProblem {
  const routing = problem();
  routing.vehicles = [
    { id: "tagged-1", start: { lat: 0, lng: 0 }, workingTime: { start: 0, end: 1000 }, tags: ["x"], fixedCost: 2, maxVisits: 13 },
    { id: "tagged-2", start: { lat: 0, lng: 0 }, workingTime: { start: 0, end: 1000 }, tags: ["x"], fixedCost: 2, maxVisits: 13 },
    { id: "plain", start: { lat: 0, lng: 0 }, workingTime: { start: 0, end: 1000 }, maxVisits: 13 },
  ];
  return routing;
}

/**
 * Both tagged vans used, the plain van idle; `routeOf` says which tagged van serves visit v (default: the first
 * three tagged visits and ten plain ones on "tagged-1", the rest on "tagged-2").
 */
function onBothTaggedVans(routing: RoutingProblem, routeOf: (v: number) => number = (v) => ((v < 6 ? v < 3 : v < 16) ? 0 : 1)): Solution {
  const instance = buildInstance(routing);
  const solution = new Solution(instance, { vehicle: 1_000_000, underload: 0 });
  for (let v = 0; v < instance.visitCount; v++) {
    const r = routeOf(v);
    solution.insert(v, r, solution.routes[r]!.nodes.length - 1, instance.windowOffset[v]!);
  }
  return solution;
}

/** Runs the cheaper-fleet step on `solution` (share of the budget up to half of `iterations`), from an incumbent taken of it now. */
function runCheapen(solution: Solution, seed: number, iterations: number): { incumbent: Incumbent; budget: Budget } {
  const random = new Random(seed);
  const incumbent = new Incumbent(solution);
  const budget = new Budget(() => 0, Infinity, iterations);
  cheapenFleet(solution, new RuinRecreate(solution, random), budget, 0.5, incumbent, random);
  return { incumbent, budget };
}

describe("a cheaper fleet of the same size", () => {
  it("replaces a costly vehicle by an idle cheaper one when the others can take its tagged visits", () => {
    for (const seed of [1, 2, 3]) {
      const solution = onBothTaggedVans(twoTaggedVans());
      expect(solution.fixedCostUsed).toBe(4);
      const random = new Random(seed);
      const incumbent = new Incumbent(solution);
      const budget = new Budget(() => 0, Infinity, 40_000);
      // A smaller fleet is out of reach (13 visits a van): the fleet phase changes nothing here.
      minimiseFleet(solution, new RuinRecreate(solution, random), budget, 0.5, incumbent, random);
      expect(solution.fixedCostUsed).toBe(4);

      cheapenFleet(solution, new RuinRecreate(solution, random), budget, 0.5, incumbent, random);
      expect(solution.unassigned.size).toBe(0);
      expect(solution.vehiclesUsed).toBe(2);
      expect(solution.fixedCostUsed).toBe(3);
      expect(solution.routes[2]!.visitCount).toBeGreaterThan(0); // the plain van
      expect(incumbent.cost).toBe(solution.cost);
      for (const route of solution.routes) expect(route.feasible).toBe(true);
    }
  });

  it("leaves the plan as it was when the cheaper vehicle cannot take the costly route's place", () => {
    const routing = twoTaggedVans();
    // Fourteen tagged visits: both tagged vans are needed (13 visits a van), and the plain van may serve none of them.
    routing.visits = routing.visits.map((visit, i) => (i < 14 ? { ...visit, requiredTags: ["x"] } : visit));
    const solution = onBothTaggedVans(routing, (v) => v % 2);
    const before = solution.cost;
    const { budget } = runCheapen(solution, 1, 200_000);

    expect(solution.cost).toBe(before);
    expect(solution.unassigned.size).toBe(0);
    expect(solution.fixedCostUsed).toBe(4);
    // Each tagged route tried in two rounds, each try within twice its patience of 4,000, then the step ended on its
    // own, before its share of the budget (a fifth: 40,000).
    expect(budget.iterations).toBeLessThanOrEqual(32_000);
  });

  it("moves on from a costly route none of whose visits the cheaper vehicle may serve, and ends", () => {
    const routing = twoTaggedVans();
    // Every visit tagged: the plain van may serve none, so it can never be opened.
    routing.visits = routing.visits.map((visit) => ({ ...visit, requiredTags: ["x"] }));
    const solution = onBothTaggedVans(routing);
    const before = solution.cost;
    // No clock: only iterations end the step, so a try that spends none must not be repeated forever.
    const { budget } = runCheapen(solution, 1, 100_000);

    expect(solution.cost).toBe(before);
    expect(solution.fixedCostUsed).toBe(4);
    expect(budget.iterations).toBe(0);
  });
});

describe("the cheaper fleet's second chance (solver.ts SECOND_CHANCE_AT)", () => {
  it("a call cut short by its share leaves the route it was trying to the next call, which tries the other first", () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const solution = onBothTaggedVans(twoTaggedVans());
      const random = new Random(seed);
      const ruinRecreate = new RuinRecreate(solution, random);
      const incumbent = new Incumbent(solution);
      const budget = new Budget(() => 0, Infinity, 100_000);
      const failed = new Uint8Array(solution.instance.vehicleCount);
      // Until one step in: the try has only begun (13 visits to place, the other van full), so the plan stays as it was.
      cheapenFleet(solution, ruinRecreate, budget, 0.00001, incumbent, random, undefined, failed);
      expect(solution.fixedCostUsed).toBe(4);
      expect(solution.cost).toBe(incumbent.cost);
      expect(failed[2]).toBe(0);
      expect(failed[0]! + failed[1]!).toBe(1);
      const tried = failed[0] ? 0 : 1;

      cheapenFleet(solution, ruinRecreate, budget, 1, incumbent, random, undefined, failed);
      expect(solution.unassigned.size).toBe(0);
      expect(solution.fixedCostUsed).toBe(3);
      // The other tagged van was emptied; the one the first call tried still serves.
      expect(solution.routes[tried]!.visitCount).toBeGreaterThan(0);
      expect(solution.routes[1 - tried]!.visitCount).toBe(0);
      expect([...failed]).toEqual([0, 0, 0]);
      for (const route of solution.routes) expect(route.feasible).toBe(true);
    }
  });

  it("runs once, when the schedule reaches its share, and the annealing goes on from the plan it leaves", () => {
    const calls: number[] = [];
    const budget = new Budget(() => 0, Infinity, 400);
    const { solution } = annealRandomPlan(3, budget, {
      midway: {
        at: 0.6,
        run: () => {
          calls.push(budget.iterations);
          // Spends budget as the cheaper-fleet step does; the annealing takes the rest.
          budget.iterations += 50;
        },
      },
    });
    expect(calls).toEqual([240]);
    expect(budget.iterations).toBe(400);
    expectFeasibleWithEveryVisitOnce(solution);
  });

  it("is not asked where no idle vehicle is cheaper than a used one", () => {
    const solution = onBothTaggedVans(twoTaggedVans());
    expect(mayCheapen(solution)).toBe(true);
    // The plain van in use instead of the second tagged one: the idle vehicle is tagged, and costs more.
    const cheaper = onBothTaggedVans(twoTaggedVans(), (v) => (v < 6 ? 0 : v < 13 ? 0 : 2));
    expect(cheaper.fixedCostUsed).toBe(3);
    expect(mayCheapen(cheaper)).toBe(false);
  });
});

describe("the fleet phase on a schedule of iterations (Budget.phaseSchedule)", () => {
  /** The "fits nowhere" day of above (one visit always out, so the phase never ends by itself), on a clock that advances `msPerReading`. */
  function run(msPerReading: number, timeLimitMs: number, phaseIterations?: number) {
    const routing = problem();
    routing.visits.push(...Array.from({ length: 5 }, (_, i) => ({ id: `extra-${i}`, location: { lat: 25 + i, lng: 25 }, visitTime: 5 })));
    routing.vehicles = routing.vehicles.map((vehicle) => ({ ...vehicle, maxVisits: 10 }));
    const solution = planned(routing, 26);
    const random = new Random(3);
    const incumbent = new Incumbent(solution);
    let readings = 0;
    const budget = new Budget(() => ++readings * msPerReading, timeLimitMs, Infinity);
    if (phaseIterations) budget.phaseSchedule = { iterations: phaseIterations, timeCap: 0.5 };
    minimiseFleet(solution, new RuinRecreate(solution, random), budget, 0.5, incumbent, random);
    return { iterations: budget.iterations, plan: incumbent.snapshot };
  }

  it("does the same steps however fast the clock runs, where the time share alone does not", () => {
    // 300 of 600 scheduled iterations; the time budget (100 ms) is never half spent by either clock.
    const fast = run(0.001, 100, 600);
    const slow = run(0.01, 100, 600);
    expect(fast.iterations).toBe(300);
    expect(slow).toEqual(fast);
    // On the time share alone (half of 10 ms), the slower clock ends the phase after fewer steps.
    const byTimeFast = run(0.001, 10);
    const byTimeSlow = run(0.01, 10);
    expect(byTimeSlow.iterations).toBeLessThan(byTimeFast.iterations);
  });

  it("still ends at its share of the time budget when the iterations would take longer", () => {
    const capped = run(0.01, 10, 1_000_000);
    expect(capped.iterations).toBeLessThan(1_000);
    expect(capped.iterations).toBe(run(0.01, 10).iterations);
  });
});

describe("the repair keeps the fleet it was given", () => {
  it("never keeps a step whose ruin emptied one of its routes: the cheaper van opened with one visit stays open", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      // "tagged-2" emptied, "plain" opened with one of its plain visits: the state cheapenFleet's repair starts from.
      const solution = onBothTaggedVans(twoTaggedVans());
      const { instance } = solution;
      const emptied = solution.routes[1]!.nodes.filter((node) => node < instance.visitCount);
      for (const v of emptied) solution.remove(v);
      const random = new Random(seed);
      const ruinRecreate = new RuinRecreate(solution, random);
      expect(ruinRecreate.openWith(emptied.find((v) => v >= 6)!, 2)).toBe(true);
      expect(solution.vehiclesUsed).toBe(2);
      const repair = new Repair(solution, ruinRecreate, random);
      repair.restart();
      const budget = new Budget(() => 0, Infinity, Infinity);

      for (let step = 0; step < 300 && solution.unassigned.size > 0; step++) {
        repair.step(budget);
        expect(solution.routes[2]!.visitCount).toBeGreaterThan(0);
        expect(solution.vehiclesUsed).toBe(2);
      }
    }
  });
});
