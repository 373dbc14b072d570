import { describe, expect, it } from "vitest";
import { buildRunProblem, describeSolution, wallClockAt } from "#shared/domain/runs/build-problem";
import { solveRouting } from "#shared/routing/solver";
import type { Visit } from "#shared/domain/visits/schema";
import { hub, input, profile, vehicle, visit } from "#test/unit/runs/plan-fixtures";

describe("Domain: building the optimizer problem of a run", () => {
  it("maps the profile and vehicle settings: depot, return, enforced capacity dimensions only, speed, visit time, constraints, priority", () => {
    const planned = buildRunProblem(input("2026-03-02T06:00:00Z"));
    const [mapped] = planned.problem.vehicles;
    expect(planned.dimensions).toEqual(["weight"]);
    expect(mapped).toMatchObject({
      id: "veh-1",
      start: { lat: -6.2, lng: 106.8 },
      returnToEnd: true,
      capacity: [100],
      minCapacity: [5],
      speedKmh: 40,
      tags: ["cold"],
      fixedCost: 1,
      maxVisits: 20,
      maxDistance: 150_000,
      maxDuration: 480,
    });
    expect(planned.problem.visits[0]).toMatchObject({ id: "a", visitTime: 12, demand: [3], requiredTags: [] });
    expect(
      buildRunProblem(input("2026-03-02T06:00:00Z", { configuration: profile({ returnToHub: false }) })).problem.vehicles[0]?.returnToEnd,
    ).toBe(false);
  });

  it("maps a vehicle's own start and end locations (a set end is always driven to) and each visit's priority", () => {
    const home = { lat: -6.3, lng: 106.7 };
    const office = { lat: -6.1, lng: 106.9 };
    const planned = buildRunProblem(
      input("2026-03-02T06:00:00Z", {
        configuration: profile({ returnToHub: false }),
        vehicles: [vehicle({ startLocation: home, endLocation: office }), vehicle({ _id: "veh-2", startLocation: home })],
        visits: [visit("a", { priority: 5 }), visit("b")],
      }),
    );
    expect(planned.problem.vehicles[0]).toMatchObject({ start: home, end: office, returnToEnd: true });
    expect(planned.problem.vehicles[1]).toMatchObject({ start: home, end: { lat: -6.2, lng: 106.8 }, returnToEnd: false });
    expect(planned.problem.visits.map((v) => v.priority)).toEqual([5, 3]);
  });

  it("maps pickup-and-delivery pairs whose two visits are both in the run; a lone half is an ordinary visit; a pair with a passed window goes as a whole", () => {
    const planned = buildRunProblem(
      input("2026-03-02T06:00:00Z", {
        visits: [
          visit("p"),
          visit("d", { pickupVisitId: "p" }),
          // Its pickup is not among the run's visits (done, or not collected): planned as an ordinary visit.
          visit("lone", { pickupVisitId: "gone" }),
          visit("late-p", { timeWindows: [{ startTime: "2026-03-01 08:00", endTime: "2026-03-01 09:00" }] }),
          visit("late-d", { pickupVisitId: "late-p" }),
        ],
      }),
    );
    expect(planned.problem.visits.map((v) => [v.id, v.pickupVisitId])).toEqual([
      ["p", undefined],
      ["d", "p"],
      ["lone", undefined],
    ]);
    expect(planned.preDropped).toEqual([
      { visitId: "late-p", reason: "outside every working time", reasonCode: "timeWindow" },
      { visitId: "late-d", reason: "pickup and delivery cannot both be served", reasonCode: "pickupDelivery" },
    ]);
  });

  it.each([
    // [run instant, expected working window in minutes since the run, planning day]
    ["before the shift: starts at its start", "2026-03-02T06:00:00Z", { start: 120, end: 660 }, "2026-03-02"],
    ["during the shift: starts at the run", "2026-03-02T10:30:00Z", { start: 0, end: 390 }, "2026-03-02"],
    ["after the shift: plans the next working day", "2026-03-02T18:00:00Z", { start: 840, end: 1380 }, "2026-03-03"],
  ])("%s", (_, runAt, window, day) => {
    const planned = buildRunProblem(input(runAt));
    expect(planned.problem.vehicles[0]?.workingTime).toEqual(window);
    expect(planned.planningDay).toBe(day);
  });

  it("reads wall clocks in the hub's time zone (else APP_TIMEZONE)", () => {
    // 08:00 in Jakarta (UTC+7) is 01:00 UTC; the run at 00:00 UTC is 07:00 there.
    const planned = buildRunProblem(input("2026-03-02T00:00:00Z", { hub: hub("Asia/Jakarta") }));
    expect(planned.problem.vehicles[0]?.workingTime).toEqual({ start: 60, end: 600 });
    expect(planned.timeZone).toBe("Asia/Jakarta");
    expect(buildRunProblem(input("2026-03-02T00:00:00Z", { appTimeZone: "Asia/Jakarta" })).timeZone).toBe("Asia/Jakarta");
  });

  it("keeps a night shift (multiday) that is still running at the run instant", () => {
    const night = vehicle({ workingTime: { startTime: "22:00", endTime: "06:00", multiday: 1 } });
    const planned = buildRunProblem(input("2026-03-02T02:00:00Z", { vehicles: [night] }));
    expect(planned.problem.vehicles[0]?.workingTime).toEqual({ start: 0, end: 240 });
  });

  it("plans a vehicle whose shifts overlap (longer than a day) on the one that started last", () => {
    // 00:00–23:59 with multiday 1 runs 48 hours from every midnight (the README's walkthrough van).
    const aroundTheClock = vehicle({ workingTime: { startTime: "00:00", endTime: "23:59", multiday: 1 } });
    // At 23:30 yesterday's shift has 29 minutes left; today's runs until 23:59 tomorrow.
    expect(buildRunProblem(input("2026-03-02T23:30:00Z", { vehicles: [aroundTheClock] })).problem.vehicles[0]?.workingTime).toEqual({
      start: 0,
      end: 1469,
    });
    expect(buildRunProblem(input("2026-03-02T06:00:00Z", { vehicles: [aroundTheClock] })).problem.vehicles[0]?.workingTime).toEqual({
      start: 0,
      end: 2519,
    });
  });

  it("places the break, cut to what is left of it", () => {
    const withBreak = vehicle({ breakTime: { startTime: "12:00", endTime: "13:00" } });
    expect(buildRunProblem(input("2026-03-02T06:00:00Z", { vehicles: [withBreak] })).problem.vehicles[0]?.breaks).toEqual([
      { earliestStart: 360, latestEnd: 420, duration: 60 },
    ]);
    expect(buildRunProblem(input("2026-03-02T12:30:00Z", { vehicles: [withBreak] })).problem.vehicles[0]?.breaks).toEqual([
      { earliestStart: 0, latestEnd: 30, duration: 30 },
    ]);
    expect(buildRunProblem(input("2026-03-02T14:00:00Z", { vehicles: [withBreak] })).problem.vehicles[0]?.breaks).toEqual([]);
  });

  it("reads H:i windows on the planning day and Y-m-d H:i windows as dates; cuts passed parts; drops a visit whose windows all passed", () => {
    const visits = [
      visit("today", { timeWindows: [{ startTime: "09:00", endTime: "11:00" }] }),
      visit("dated", { timeWindows: [{ startTime: "2026-03-03 09:00", endTime: "2026-03-03 10:00" }] }),
      visit("running", { timeWindows: [{ startTime: "05:00", endTime: "07:00" }] }),
      visit("passed", { timeWindows: [{ startTime: "01:00", endTime: "02:00" }] }),
      visit("any", { timeWindows: [] }),
    ];
    const planned = buildRunProblem(input("2026-03-02T06:00:00Z", { visits }));
    const windows = Object.fromEntries(planned.problem.visits.map((v) => [v.id, v.timeWindows]));
    expect(windows).toEqual({
      today: [{ start: 180, end: 300 }],
      dated: [{ start: 1620, end: 1680 }],
      running: [{ start: 0, end: 60 }],
      any: [],
    });
    expect(planned.preDropped).toEqual([{ visitId: "passed", reason: "outside every working time", reasonCode: "timeWindow" }]);

    // After the working day, H:i windows refer to the next day.
    const evening = buildRunProblem(input("2026-03-02T18:00:00Z", { visits: [visits[0] as Visit] }));
    expect(evening.problem.visits[0]?.timeWindows).toEqual([{ start: 900, end: 1020 }]);
  });

  it("describes a solution: ordered trips with eta/etd in the hub's zone, totals, drops with names, summary", () => {
    const run = input("2026-03-02T06:00:00Z", {
      visits: [visit("a"), visit("b", { coordinate: { lat: -6.25, lng: 106.85 } }), visit("heavy", { capacity: { weight: 500 } })],
    });
    const planned = buildRunProblem(run);
    const solution = solveRouting(planned.problem, { timeLimitMs: Infinity, maxIterations: 50 });
    const { body, summary } = describeSolution(run, planned, solution);
    expect(summary).toMatchObject({
      vehiclesUsed: 1,
      vehiclesAvailable: 1,
      visitsPlanned: 3,
      visitsAssigned: 2,
      visitsDropped: 1,
      timeZone: "UTC",
    });
    expect(body.dropped).toEqual([
      {
        visitId: "heavy",
        visitName: "Visit heavy",
        reason: "exceeds every vehicle's capacity",
        reasonCode: "capacity",
        reasonDetail: "weight",
      },
    ]);
    expect(summary.droppedByReason).toEqual({ capacity: 1 });
    const [route] = body.routes;
    expect(route?.trips.map((trip) => trip.order)).toEqual([1, 2]);
    expect(route?.departure).toBe("2026-03-02 08:00");
    for (const trip of route?.trips ?? []) {
      expect(trip.eta >= "2026-03-02 08:00").toBe(true);
      expect(trip.etd >= trip.eta).toBe(true);
    }
    expect(route?.load).toEqual({ weight: 6 });
  });

  it("formats minutes after the run as wall-clock time of a zone", () => {
    expect(wallClockAt(new Date("2026-03-02T06:00:00Z"), 90, "UTC")).toBe("2026-03-02 07:30");
    expect(wallClockAt(new Date("2026-03-02T20:00:00Z"), 90, "Asia/Jakarta")).toBe("2026-03-03 04:30");
  });
});
