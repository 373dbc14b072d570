import { describe, expect, it } from "vitest";
import { explainDropped } from "#shared/routing/explain";
import type { RoutingProblem, RoutingVehicle, RoutingVisit } from "#shared/routing/model";
import { euclideanTravel, solveRouting } from "#shared/routing/solver";

/**
 * Reasons for unplanned visits: each day is built so that one constraint family binds, solved, and every visit the
 * plan leaves out must name that family. Planar travel (1 unit = 1 minute at 60 km/h) keeps the arithmetic plain.
 */
const travel = euclideanTravel();
const at = (x: number, y = 0) => ({ lat: y, lng: x });
const vehicle = (id: string, overrides: Partial<RoutingVehicle> = {}): RoutingVehicle => ({
  id,
  start: at(0),
  speedKmh: 0.06,
  workingTime: { start: 0, end: 600 },
  ...overrides,
});
const visits = (count: number, overrides: (i: number) => Partial<RoutingVisit> = () => ({})): RoutingVisit[] =>
  Array.from({ length: count }, (_, i) => ({ id: `v${i}`, location: at(1 + (i % 5), Math.floor(i / 5)), visitTime: 5, ...overrides(i) }));

function explain(problem: RoutingProblem) {
  const solution = solveRouting({ ...problem, travel }, { timeLimitMs: Infinity, maxIterations: 300 });
  expect(solution.dropped.length).toBeGreaterThan(0);
  const explained = explainDropped({ ...problem, travel }, solution);
  return solution.dropped.map((entry) => ({ visitId: entry.visitId, reason: entry.reason, ...explained.get(entry.visitId)! }));
}

describe("Routing: why a visit is left out (insertion evaluation, one family relaxed at a time)", () => {
  it("capacity: a day whose vans are full on weight names capacity and the weight dimension", () => {
    const dropped = explain({
      vehicles: [vehicle("a", { capacity: [50, 100] }), vehicle("b", { capacity: [50, 100] })],
      visits: visits(12, () => ({ demand: [10, 1] })),
    });
    expect(dropped).toHaveLength(2);
    for (const entry of dropped)
      expect(entry).toMatchObject({ reason: "could not be fitted", reasonCode: "capacity", capacityDimensions: [0] });
  });

  it("timeWindow: visits that all want the same ten minutes", () => {
    const dropped = explain({
      vehicles: [vehicle("a")],
      visits: visits(6, () => ({ timeWindows: [{ start: 100, end: 110 }] })),
    });
    for (const entry of dropped) expect(entry.reasonCode).toBe("timeWindow");
  });

  it("workingTime: a shift too short for the day", () => {
    const dropped = explain({
      vehicles: [vehicle("a", { workingTime: { start: 0, end: 40 } })],
      visits: visits(10),
    });
    for (const entry of dropped) expect(entry.reasonCode).toBe("workingTime");
  });

  it("maxVisits, maxDistance and maxDuration: each limit named when it is the one that binds", () => {
    for (const [limit, code] of [
      [{ maxVisits: 3 }, "maxVisits"],
      [{ maxDistance: 6 }, "maxDistance"],
      [{ maxDuration: 40 }, "maxDuration"],
    ] as const) {
      const dropped = explain({ vehicles: [vehicle("a", limit)], visits: visits(8) });
      for (const entry of dropped) expect(entry.reasonCode, code).toBe(code);
    }
  });

  it("break: a break that must be taken where a visit's only window is", () => {
    const dropped = explain({
      vehicles: [vehicle("a", { breaks: [{ earliestStart: 100, latestEnd: 130, duration: 30 }] })],
      visits: [
        { id: "lunch-time", location: at(1), visitTime: 5, timeWindows: [{ start: 105, end: 120 }] },
        { id: "other", location: at(2), visitTime: 5 },
      ],
    });
    expect(dropped).toEqual([expect.objectContaining({ visitId: "lunch-time", reasonCode: "break" })]);
  });

  it("noCompatibleVehicle: the only vehicle with the visit's tag is full; and tags no vehicle has, before the search", () => {
    const dropped = explain({
      vehicles: [vehicle("cold", { tags: ["cold"], maxVisits: 2 }), vehicle("plain")],
      visits: [...visits(3, () => ({ requiredTags: ["cold"] })), { id: "frozen", location: at(1), requiredTags: ["frozen"] }],
    });
    expect(dropped).toContainEqual(
      expect.objectContaining({ visitId: "frozen", reason: "no vehicle with matching tags", reasonCode: "noCompatibleVehicle" }),
    );
    const searched = dropped.filter((entry) => entry.visitId !== "frozen");
    expect(searched).toHaveLength(1);
    // Relaxing the tags (the plain van) or the visit limit (the cold van) lets it in: both bind, tags named first.
    expect(searched[0]).toMatchObject({ reasonCode: "noCompatibleVehicle", binding: ["noCompatibleVehicle", "maxVisits"] });
  });

  it("pickupDelivery: a pair whose delivery must happen before its pickup, each fitting alone; and a pair without a common vehicle", () => {
    const dropped = explain({
      vehicles: [vehicle("a", { tags: ["lift"] }), vehicle("b", { tags: ["cold"] })],
      visits: [
        { id: "p", location: at(1), timeWindows: [{ start: 200, end: 210 }] },
        { id: "d", location: at(2), pickupVisitId: "p", timeWindows: [{ start: 100, end: 110 }] },
        { id: "p2", location: at(1), requiredTags: ["cold"] },
        { id: "d2", location: at(2), pickupVisitId: "p2", requiredTags: ["lift"] },
      ],
    });
    const byId = Object.fromEntries(dropped.map((entry) => [entry.visitId, entry]));
    expect(byId.p?.reasonCode).toBe("pickupDelivery");
    expect(byId.d?.reasonCode).toBe("pickupDelivery");
    expect(byId.p2).toMatchObject({ reason: "pickup and delivery cannot both be served", reasonCode: "pickupDelivery" });
  });

  it("badCoordinates before the search; lowPriority when a visit would fit but the plan does not pay for it", () => {
    const problem: RoutingProblem = {
      vehicles: [vehicle("a")],
      visits: [
        { id: "nowhere", location: at(Number.NaN) },
        { id: "kept", location: at(1) },
        { id: "spare", location: at(2) },
      ],
      travel,
    };
    const solution = solveRouting(problem, { timeLimitMs: Infinity, maxIterations: 50 });
    // As a search might leave it: "spare" dropped although the route has room.
    const route = solution.routes[0]!;
    const spare = route.stops.findIndex((stop) => stop.visitId === "spare");
    const stripped = {
      ...solution,
      routes: [{ ...route, stops: route.stops.filter((_, i) => i !== spare) }],
      dropped: [...solution.dropped, { visitId: "spare", reason: "could not be fitted" as const }],
    };
    const explained = explainDropped(problem, stripped);
    expect(explained.get("nowhere")?.reasonCode).toBe("badCoordinates");
    expect(explained.get("spare")?.reasonCode).toBe("lowPriority");
  });
});

describe("Routing: the explanation's hard time cap", () => {
  // A capacity-bound day: two vans of 50, twelve visits of 10 → two dropped, each explained against two routes.
  const capacityDay = (): RoutingProblem => ({
    vehicles: [vehicle("a", { capacity: [50] }), vehicle("b", { capacity: [50] })],
    visits: visits(12, () => ({ demand: [10] })),
    travel,
  });

  it("explains every dropped visit while the clock stays before the deadline", () => {
    const problem = capacityDay();
    const solution = solveRouting(problem, { timeLimitMs: Infinity, maxIterations: 300 });
    const explained = explainDropped(problem, solution, { deadline: 1000, clock: () => 0 });
    expect(solution.dropped.map((entry) => explained.get(entry.visitId)?.reasonCode)).toEqual(["capacity", "capacity"]);
  });

  it("stops at the deadline: the visits not reached are unexplained, the ones before keep their code", () => {
    const problem = capacityDay();
    const solution = solveRouting(problem, { timeLimitMs: Infinity, maxIterations: 300 });
    // Each reading of the clock moves it on by one tick; the cap is reached after the first visit's two routes.
    let now = 0;
    const readings: number[] = [];
    const clock = () => {
      readings.push(now);
      return now++;
    };
    const explained = explainDropped(problem, solution, { deadline: 3, clock });
    const codes = solution.dropped.map((entry) => explained.get(entry.visitId)?.reasonCode);
    expect(codes).toEqual(["capacity", "unexplained"]);
    expect(explained.get(solution.dropped[1]!.visitId)).toEqual({
      reasonCode: "unexplained",
      binding: ["unexplained"],
      capacityDimensions: [],
    });
    // It stopped reading the clock (and evaluating) once the cap was reached.
    expect(readings.at(-1)).toBe(3);
  });

  it("a deadline already passed explains nothing the search dropped, and keeps the reasons given before the search", () => {
    const problem: RoutingProblem = { ...capacityDay(), visits: [...capacityDay().visits, { id: "nowhere", location: at(Number.NaN) }] };
    const solution = solveRouting(problem, { timeLimitMs: Infinity, maxIterations: 300 });
    const explained = explainDropped(problem, solution, { deadline: 0, clock: () => 5 });
    expect(explained.get("nowhere")?.reasonCode).toBe("badCoordinates");
    const searchDropped = solution.dropped.filter((entry) => entry.reason === "could not be fitted");
    expect(searchDropped).toHaveLength(2);
    for (const entry of searchDropped) expect(explained.get(entry.visitId)?.reasonCode).toBe("unexplained");
  });
});
