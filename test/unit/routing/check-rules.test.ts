import { describe, expect, it } from "vitest";
import { checkSolution } from "#shared/routing/check";
import { euclideanTravel } from "#shared/routing/matrix";
import type { RoutingProblem, RoutingSolution, TripStop, VehicleRoute } from "#shared/routing/model";

/**
 * checkSolution, the only feasibility check of solver output, rule by rule: a small hand-made
 * problem (euclidean travel, so a leg's distance is its minutes), a solution that meets every rule,
 * and one tampered solution (or problem) per rule, each expecting exactly that rule's message.
 *
 *   v1 (tags cold, capacity 2, one break of 10 in [20, 60]): depot → a (lng 10) → break → b (lng 20) → depot: 40 km, back at 65.
 *   v2 (capacity 5): depot → p (lat 10, picks up 3) → d (lat 20, delivers p's load) → depot: 40 km, back at 40.
 */
const problem: RoutingProblem = {
  travel: euclideanTravel(),
  visits: [
    { id: "a", location: { lat: 0, lng: 10 }, visitTime: 5, demand: [1], requiredTags: ["cold"] },
    { id: "b", location: { lat: 0, lng: 20 }, visitTime: 5, demand: [1] },
    { id: "p", location: { lat: 10, lng: 0 }, demand: [3] },
    { id: "d", location: { lat: 20, lng: 0 }, pickupVisitId: "p" },
  ],
  vehicles: [
    {
      id: "v1",
      start: { lat: 0, lng: 0 },
      capacity: [2],
      workingTime: { start: 0, end: 1000 },
      tags: ["cold"],
      breaks: [{ earliestStart: 20, latestEnd: 60, duration: 10 }],
      maxDistance: 100,
      maxDuration: 500,
      maxVisits: 3,
    },
    { id: "v2", start: { lat: 0, lng: 0 }, capacity: [5], workingTime: { start: 0, end: 1000 } },
  ],
};

const stop = (visitId: string, start: number): TripStop => ({
  visitId,
  arrival: start,
  waiting: 0,
  start,
  departure: start,
  distance: 0,
  load: [],
});
const route = (vehicleId: string, stops: TripStop[], distance: number, breaks: VehicleRoute["breaks"] = []): VehicleRoute => ({
  vehicleId,
  departure: 0,
  arrival: 0,
  stops,
  breaks,
  distance,
  duration: 0,
  travelTime: 0,
  waitingTime: 0,
  serviceTime: 0,
  load: [],
  underload: 0,
});
const valid: RoutingSolution = {
  routes: [
    route("v1", [stop("a", 10), stop("b", 40)], 40, [{ afterStop: 0, start: 20, end: 30 }]),
    route("v2", [stop("p", 10), stop("d", 20)], 40),
  ],
  dropped: [],
  totals: { vehicles: 2, visits: 4, distance: 80, duration: 0, fixedCost: 0 },
  iterations: 0,
  endedBy: "budget",
};

const v1 = (solution: RoutingSolution) => solution.routes[0] as VehicleRoute;
const v2 = (solution: RoutingSolution) => solution.routes[1] as VehicleRoute;
/** The violations of the valid solution changed by `change`. */
const tampered = (change: (solution: RoutingSolution) => void): string[] => {
  const copy = structuredClone(valid);
  change(copy);
  return checkSolution(problem, copy).violations;
};
/** The violations of the valid solution on a problem whose vehicle or visit `id` has `changes`. */
const withProblem = (id: string, changes: Record<string, unknown>): string[] =>
  checkSolution(
    {
      ...problem,
      vehicles: problem.vehicles.map((vehicle) => (vehicle.id === id ? { ...vehicle, ...changes } : vehicle)),
      visits: problem.visits.map((visit) => (visit.id === id ? { ...visit, ...changes } : visit)),
    },
    valid,
  ).violations;

describe("checkSolution, one rule at a time", () => {
  it("accepts the valid solution and recomputes its distance", () => {
    expect(checkSolution(problem, valid)).toEqual({ violations: [], distance: 80 });
  });

  it("maximum distance", () => {
    expect(withProblem("v1", { maxDistance: 39 })).toEqual(["v1: exceeds its maximum distance"]);
  });

  it("maximum duration (departure to return)", () => {
    expect(withProblem("v1", { maxDuration: 64 })).toEqual(["v1: exceeds its maximum duration"]);
  });

  it("maximum visits", () => {
    expect(withProblem("v1", { maxVisits: 1 })).toEqual(["v1: exceeds its maximum visits"]);
  });

  it("required tags", () => {
    expect(withProblem("v1", { tags: ["frozen"] })).toEqual(["v1: lacks tag cold for a"]);
  });

  it("travel time: a stop that starts before the vehicle can be there", () => {
    expect(tampered((s) => (v1(s).stops[1] = stop("b", 35)))).toEqual(["v1: b starts at 35, cannot be there before 40"]);
  });

  it("time windows", () => {
    expect(withProblem("b", { timeWindows: [{ start: 0, end: 30 }] })).toEqual(["v1: b starts at 40, outside its windows"]);
  });

  it("reported distance", () => {
    expect(tampered((s) => (v1(s).distance = 39))).toEqual(["v1: reports distance 39, drives 40"]);
  });

  it("leaving before the working time", () => {
    expect(tampered((s) => (v1(s).departure = -5))).toEqual(["v1: leaves before its working time"]);
  });

  it("returning after the working time", () => {
    expect(withProblem("v1", { workingTime: { start: 0, end: 60 } })).toEqual(["v1: ends at 65, after its working time"]);
  });

  it("a vehicle used twice", () => {
    expect(tampered((s) => s.routes.push(route("v2", [], 0)))).toEqual(["v2: vehicle used twice"]);
  });

  it("an unknown vehicle, an unknown visit", () => {
    expect(tampered((s) => s.routes.push(route("ghost", [], 0)))).toEqual(["ghost: unknown vehicle"]);
    expect(tampered((s) => v2(s).stops.push(stop("zzz", 100)))).toEqual(["v2: unknown visit zzz"]);
  });

  it("capacity: on board at the start, and after a pickup", () => {
    expect(withProblem("v1", { capacity: [1] })).toEqual(["v1: load on board 2 at the start exceeds capacity in dimension 0"]);
    expect(withProblem("v2", { capacity: [2] })).toEqual(["v2: load on board 3 after p exceeds capacity in dimension 0"]);
  });

  it("break timing: outside the vehicle's break window, starting before the vehicle is free, missing, after a missing stop", () => {
    expect(tampered((s) => (v1(s).breaks = [{ afterStop: 0, start: 15, end: 25 }]))).toEqual([
      "v1: break 15–25 matches none of the vehicle's breaks",
    ]);
    // a starts at 16, so the vehicle is free at 21: a break at 20 starts before it.
    expect(tampered((s) => (v1(s).stops[0] = stop("a", 16)))).toEqual(["v1: break at 20 starts before 21"]);
    expect(tampered((s) => (v1(s).breaks = []))).toEqual(["v1: takes 0 of 1 breaks"]);
    expect(tampered((s) => (v1(s).breaks = [{ afterStop: 5, start: 20, end: 30 }]))).toEqual(["v1: break scheduled after a missing stop"]);
  });

  it("pickup and delivery: split across vehicles, served in part, delivered first", () => {
    const split = tampered((s) => {
      v2(s).stops.pop();
      v2(s).distance = 20;
      v1(s).stops.push(stop("d", 200));
      v1(s).distance = 20 + Math.hypot(20, 20) + 20;
    });
    expect(split).toEqual(["d: pair with p is split between vehicles"]);
    const inPart = tampered((s) => {
      v2(s).stops.pop();
      v2(s).distance = 20;
      s.dropped.push({ visitId: "d", reason: "could not be fitted" });
    });
    expect(inPart).toEqual(["d: pair with p is served only in part"]);
    const deliveredFirst = tampered((s) => {
      v2(s).stops = [stop("d", 20), stop("p", 30)];
    });
    expect(deliveredFirst).toEqual(["d: delivered before its pickup p"]);
  });

  it("every visit exactly once among stops and dropped visits", () => {
    expect(tampered((s) => s.dropped.push({ visitId: "a", reason: "could not be fitted" }))).toEqual([
      "a: appears 2 times among stops and dropped visits",
    ]);
    expect(
      tampered((s) => {
        v2(s).stops = [];
        v2(s).distance = 0;
      }),
    ).toEqual(["p: appears 0 times among stops and dropped visits", "d: appears 0 times among stops and dropped visits"]);
  });
});
