import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import {
  etaChanges,
  geofenceArrival,
  type ProjectionInput,
  type ProjectionStop,
  plannedProjection,
  projectRoute,
  riskOf,
} from "#shared/domain/live/projection";
import { buildRunProblem, currentOrNextShift, describeSolution } from "#shared/domain/runs/build-problem";
import { liveRoutesOf } from "#shared/domain/runs/live-day";
import { solveRouting } from "#shared/routing/solver";
import { hub, input as planInput, vehicle, visit } from "#test/unit/runs/plan-fixtures";

/** A hand-made route: from 08:00 UTC, legs 10, 20, 30 minutes, 5 minutes of service each, 15 back. */
function handRoute(overrides: Partial<ProjectionInput> = {}, stops: Array<Partial<ProjectionStop>> = [{}, {}, {}]): ProjectionInput {
  return {
    plan: {
      origin: "2026-12-01T08:00:00.000Z",
      planningDay: "2026-12-01",
      departureMinutes: 0,
      returnMinutes: 15,
      legs: [10, 20, 30],
      breaks: [],
    },
    timeZone: "UTC",
    stops: stops.map((stop, index) => ({
      visitId: `v${index}`,
      status: "ASSIGNED",
      onRoute: true,
      plannedEta: null,
      coordinate: { lat: -6.2 + 0.01 * index, lng: 106.8 },
      serviceMinutes: 5,
      timeWindows: [],
      changedAt: null,
      ...stop,
    })),
    now: new Date("2026-12-01T07:00:00Z"),
    speedKmh: 30,
    roadFactor: 1.3,
    shiftEnd: "2026-12-01T17:00:00.000Z",
    atRiskMinutes: 15,
    ...overrides,
  };
}

const at = (hhmm: string) => `2026-12-01T${hhmm}:00.000Z`;
const etas = (projection: ReturnType<typeof projectRoute>) => projection.stops.map((stop) => stop.projectedEta?.slice(11) ?? null);
const etds = (projection: ReturnType<typeof projectRoute>) => projection.stops.map((stop) => stop.projectedEtd?.slice(11) ?? null);

describe("Function: projectRoute", () => {
  describe("a dispatched plan with no progress", () => {
    // Plans of the real optimizer: windows (with waiting), a break, a run instant inside its minute, two time zones.
    const cases = [
      { zone: "Asia/Jakarta", runAt: "2026-12-01T00:30:17.250Z", seed: 1 },
      { zone: "Europe/Berlin", runAt: "2026-03-29T05:59:41.900Z", seed: 7 },
      { zone: "UTC", runAt: "2026-12-01T07:00:00.000Z", seed: 3 },
    ];
    for (const { zone, runAt, seed } of cases) {
      it(`reproduces every dispatched eta, etd and the return to the minute (${zone}, run ${runAt})`, () => {
        // Prepare
        let state = seed;
        const random = () => {
          state = (state * 48271) % 2147483647;
          return state / 2147483647;
        };
        const visits = Array.from({ length: 24 }, (_, i) =>
          visit(`v${i}`, {
            coordinate: { lat: -6.2 + (random() - 0.5) * 0.2, lng: 106.8 + (random() - 0.5) * 0.2 },
            visitTime: i % 3 === 0 ? 7.5 : null,
            capacity: { weight: 1, volume: 0 },
            timeWindows:
              i % 4 === 0 ? [{ startTime: "11:00", endTime: "12:30" }] : i % 5 === 0 ? [{ startTime: "14:00", endTime: "16:00" }] : [],
          }),
        );
        const vehicles = [
          vehicle({ _id: "van-1", tags: [], breakTime: { startTime: "12:00", endTime: "12:45" }, constraints: {} }),
          vehicle({ _id: "van-2", tags: [], speed: 25, constraints: {} }),
        ];
        const run = planInput(runAt, { hub: hub(zone), vehicles, visits });
        const planned = buildRunProblem(run);
        const solution = solveRouting(planned.problem, { timeLimitMs: Infinity, maxIterations: 300, seed });
        const { body, summary } = describeSolution(run, planned, solution);
        const live = liveRoutesOf(body.routes, {
          hubId: "hub-1",
          resultId: "r1",
          timeZone: zone,
          dispatchedTime: "x",
          configurationId: "conf-1",
          planningDay: summary.planningDay,
        });
        expect(body.routes.length).toBeGreaterThan(0);
        expect(body.routes.some((route) => route.breaks.length > 0)).toBe(true);
        expect(body.routes.some((route) => route.trips.some((trip) => trip.waitingMinutes > 0))).toBe(true);

        for (const [r, route] of body.routes.entries()) {
          const plan = live[r]?.plan;
          if (!plan) throw new Error("no plan on the live route");
          const van = vehicles.find((v) => v._id === route.vehicleId)!;
          const byId = new Map(visits.map((v) => [v._id, v]));
          // Act
          const projection = projectRoute({
            plan,
            timeZone: zone,
            stops: route.trips.map((trip) => {
              const stored = byId.get(trip.visitId)!;
              return {
                visitId: trip.visitId,
                status: "ASSIGNED",
                onRoute: true,
                plannedEta: trip.eta,
                coordinate: stored.coordinate,
                serviceMinutes: stored.visitTime ?? run.configuration.defaultVisitTime,
                timeWindows: stored.timeWindows,
                changedAt: null,
              };
            }),
            now: new Date(runAt),
            speedKmh: van.speed,
            roadFactor: run.configuration.roadFactor,
            shiftEnd: currentOrNextShift(van, DateTime.fromISO(runAt, { zone })).end.toUTC().toISO() as string,
            atRiskMinutes: 15,
          });
          // Assess
          expect(projection.startedFrom).toBe("plan");
          expect(projection.pace).toBe(1);
          expect(projection.stops.map((stop) => stop.projectedEta)).toEqual(route.trips.map((trip) => trip.eta));
          expect(projection.stops.map((stop) => stop.projectedEtd)).toEqual(route.trips.map((trip) => trip.etd));
          expect(projection.projectedReturn).toBe(route.arrival);
          expect(projection.overtimeMinutes).toBe(0);
        }
      });
    }
  });

  describe("where it starts", () => {
    it("replays the hand-made plan: 08:10, 08:35, 09:10, back 09:30", () => {
      const projection = projectRoute(handRoute());
      expect(etas(projection)).toEqual(["08:10", "08:35", "09:10"]);
      expect(etds(projection)).toEqual(["08:15", "08:40", "09:15"]);
      expect(projection.projectedReturn).toBe("2026-12-01 09:30");
      expect(projection.currentVisitId).toBe("v0");
    });

    it("starts from the ARRIVED stop, at its arrival, served no earlier than now, at the day's observed pace", () => {
      // Leg 1 took 12 of 10 planned minutes, leg 2 30 of 20: pace (12 + 30) / (10 + 20) = 1.4.
      const projection = projectRoute(
        handRoute({ now: new Date(at("08:52")) }, [
          { status: "DONE", observed: { startedAt: at("08:00"), arrivedAt: at("08:12"), finishedAt: at("08:20") } },
          { status: "ARRIVED", observed: { startedAt: at("08:20"), arrivedAt: at("08:50") } },
          {},
        ]),
      );
      expect(projection.startedFrom).toBe("arrived");
      expect(projection.pace).toBeCloseTo(1.4, 10);
      expect(etas(projection)).toEqual(["08:12", "08:50", "09:37"]);
      expect(etds(projection)).toEqual(["08:20", "08:55", "09:42"]);
      expect(projection.projectedReturn).toBe("2026-12-01 10:03");
      expect(projection.currentVisitId).toBe("v1");
      expect(projection.stops[0]).toMatchObject({ risk: null, slackMinutes: null });
    });

    it("keeps an ARRIVED stop in service until now when it overruns its service time", () => {
      const projection = projectRoute(
        handRoute({ now: new Date(at("08:40")) }, [{ status: "ARRIVED", observed: { arrivedAt: at("08:10") } }, {}, {}]),
      );
      expect(etds(projection)).toEqual(["08:40", "09:05", "09:40"]);
    });

    it("starts from the last finished stop, and the next stop is not reached before now", () => {
      const projection = projectRoute(handRoute({ now: new Date(at("09:00")) }, [{ status: "DONE", changedAt: at("08:30") }, {}, {}]));
      expect(projection.startedFrom).toBe("lastFinished");
      // 08:30 + 20 = 08:50, but at 09:00 it has not been reported there: 09:00.
      expect(etas(projection)).toEqual([null, "09:00", "09:35"]);
      expect(etds(projection)[0]).toBe("08:30");
    });

    it("starts an EN_ROUTE stop's leg when the driver started it", () => {
      const projection = projectRoute(
        handRoute({ now: new Date(at("08:41")) }, [
          { status: "DONE", changedAt: at("08:15") },
          { status: "EN_ROUTE", observed: { startedAt: at("08:40") } },
          {},
        ]),
      );
      expect(etas(projection)).toEqual([null, "09:00", "09:35"]);
      expect(projection.currentVisitId).toBe("v1");
    });

    it("starts from a fresh position (great-circle at the vehicle's speed), and ignores one older than 5 minutes", () => {
      // About 5.56 km from the next stop: × 1.3 road factor at 30 km/h ≈ 14.5 minutes.
      const position = { lat: -6.25, lng: 106.8, at: at("08:00") };
      const fresh = projectRoute(handRoute({ now: new Date(at("08:03")), position }));
      expect(fresh.startedFrom).toBe("position");
      expect(etas(fresh)[0]).toBe("08:14");
      expect(fresh.position).toEqual(position);
      const stale = projectRoute(handRoute({ now: new Date(at("08:06")), position }));
      expect(stale.startedFrom).toBe("plan");
      expect(etas(stale)[0]).toBe("08:10");
    });

    it("skips a stop no longer on the route, driving from the last place straight to the next", () => {
      const projection = projectRoute(
        handRoute({}, [{ status: "DONE", changedAt: at("08:15") }, { status: "CANCELLED", onRoute: false }, {}]),
      );
      expect(projection.stops[1]).toMatchObject({ projectedEta: null, risk: null });
      // v0 → v2 is 2.22 km great-circle × 1.3 at 30 km/h = 5.8 minutes.
      expect(etas(projection)[2]).toBe("08:20");
    });
  });

  describe("pace", () => {
    it("is clamped to 1.5 when legs take three times the plan, and to 0.8 when half", () => {
      const slow = projectRoute(
        handRoute({ now: new Date(at("08:31")) }, [
          { status: "DONE", observed: { startedAt: at("08:00"), arrivedAt: at("08:30"), finishedAt: at("08:31") } },
          {},
          {},
        ]),
      );
      expect(slow.pace).toBe(1.5);
      expect(etas(slow)[1]).toBe("09:01");
      const fast = projectRoute(
        handRoute({ now: new Date(at("08:06")) }, [
          { status: "DONE", observed: { startedAt: at("08:00"), arrivedAt: at("08:05"), finishedAt: at("08:06") } },
          {},
          {},
        ]),
      );
      expect(fast.pace).toBe(0.8);
      expect(etas(fast)[1]).toBe("08:22");
    });

    it("does not measure a leg across a planned break unless the driver started it after the break", () => {
      const plan = { ...handRoute().plan, breaks: [{ afterOrder: 1, startMinutes: 20, durationMinutes: 30 }] };
      const projection = projectRoute(
        handRoute({ plan, now: new Date(at("09:30")) }, [
          { status: "DONE", changedAt: at("08:15"), observed: { finishedAt: at("08:15") } },
          { status: "DONE", observed: { arrivedAt: at("09:15"), finishedAt: at("09:20") } },
          {},
        ]),
      );
      expect(projection.pace).toBe(1);
    });
  });

  describe("breaks and windows", () => {
    it("keeps a break in its place, never earlier than planned, later when the route runs late", () => {
      const plan = { ...handRoute().plan, breaks: [{ afterOrder: 1, startMinutes: 30, durationMinutes: 30 }] };
      const onTime = projectRoute(handRoute({ plan }));
      // 08:15 done, break 08:30–09:00, then 20 minutes.
      expect(etas(onTime)).toEqual(["08:10", "09:20", "09:55"]);
      const late = projectRoute(handRoute({ plan, now: new Date(at("08:41")) }, [{ status: "DONE", changedAt: at("08:40") }, {}, {}]));
      expect(etas(late)).toEqual([null, "09:30", "10:05"]);
    });

    it("waits for a window to open and serves in the first window still open", () => {
      const windows = [
        { startTime: "08:00", endTime: "08:30" },
        { startTime: "09:30", endTime: "10:00" },
      ];
      const projection = projectRoute(handRoute({}, [{}, {}, { timeWindows: windows }]));
      // Arrives 09:10, after the first window closed: waits for 09:30.
      expect(etas(projection)[2]).toBe("09:10");
      expect(etds(projection)[2]).toBe("09:35");
      expect(projection.stops[2]?.slackMinutes).toBe(30);
    });
  });

  describe("risk", () => {
    it("is ON_TIME, AT_RISK or LATE by the slack left and the profile's atRiskMinutes", () => {
      expect(riskOf(15, 15)).toBe("ON_TIME");
      expect(riskOf(14, 15)).toBe("AT_RISK");
      expect(riskOf(0, 15)).toBe("AT_RISK");
      expect(riskOf(-1, 15)).toBe("LATE");
      const window = (end: string) => [{ startTime: "08:00", endTime: end }];
      const projection = projectRoute(
        handRoute({}, [{ timeWindows: window("08:25") }, { timeWindows: window("08:40") }, { timeWindows: window("09:05") }]),
      );
      // Service starts 08:10, 08:35, 09:10.
      expect(projection.stops.map((stop) => [stop.slackMinutes, stop.risk])).toEqual([
        [15, "ON_TIME"],
        [5, "AT_RISK"],
        [-5, "LATE"],
      ]);
    });

    it("measures a stop without a window against the end of the shift, and counts overtime", () => {
      const projection = projectRoute(handRoute({ shiftEnd: at("09:20") }));
      expect(projection.stops.map((stop) => stop.risk)).toEqual(["ON_TIME", "ON_TIME", "AT_RISK"]);
      expect(projection.overtimeMinutes).toBe(10);
    });
  });
});

describe("Function: etaChanges", () => {
  const route = handRoute();
  const baseline = plannedProjection(route);

  it("announces a stop whose ETA moved by etaChangeMinutes or more from the plan, and its risk when it changed", () => {
    const late = projectRoute(
      handRoute({ now: new Date(at("08:30")) }, [{ status: "ARRIVED", observed: { arrivedAt: at("08:30") } }, {}, {}]),
    );
    const changes = etaChanges({}, late, baseline, { now: new Date(at("08:30")), etaChangeMinutes: 10, timeZone: "UTC" });
    expect(Object.keys(changes)).toEqual(["v0", "v1", "v2"]);
    expect(changes.v1).toMatchObject({ eta: "2026-12-01 08:55", previousEta: "2026-12-01 08:35", etaN: 1, riskN: 0 });
  });

  it("stays quiet below the threshold, and within 5 minutes of the last announcement", () => {
    const moved = (minute: string) =>
      projectRoute(handRoute({ now: new Date(at(minute)) }, [{ status: "ARRIVED", observed: { arrivedAt: at(minute) } }, {}, {}]));
    expect(etaChanges({}, moved("08:15"), baseline, { now: new Date(at("08:15")), etaChangeMinutes: 10, timeZone: "UTC" })).toEqual({});
    const first = etaChanges({}, moved("08:30"), baseline, { now: new Date(at("08:30")), etaChangeMinutes: 10, timeZone: "UTC" });
    // 3 minutes later it moved 15 more: not yet (5-minute rule); 6 minutes later: once more.
    expect(
      etaChanges(first, moved("08:45"), baseline, { now: new Date(at("08:33")), etaChangeMinutes: 10, timeZone: "UTC" }).v2,
    ).toBeUndefined();
    expect(
      etaChanges(first, moved("08:45"), baseline, { now: new Date(at("08:36")), etaChangeMinutes: 10, timeZone: "UTC" }).v2,
    ).toMatchObject({
      etaN: 2,
      previousEta: "2026-12-01 09:30",
    });
  });
});

describe("Function: geofenceArrival", () => {
  const stop = { lat: -6.2, lng: 106.8 };
  it("arrives on two slow samples within the radius of the stop", () => {
    expect(
      geofenceArrival(
        [
          { lat: -6.2002, lng: 106.8, at: at("08:00"), speedKmh: 2 },
          { lat: -6.2001, lng: 106.8, at: at("08:00").replace(":00.000", ":30.000"), speedKmh: 1 },
        ],
        stop,
        75,
      ),
    ).toBe(true);
  });
  it("does not arrive on one sample, a fast one, or one outside the radius", () => {
    expect(geofenceArrival([{ lat: -6.2001, lng: 106.8, at: at("08:00"), speedKmh: 0 }], stop, 75)).toBe(false);
    expect(
      geofenceArrival(
        [
          { lat: -6.2001, lng: 106.8, at: at("08:00"), speedKmh: 30 },
          { lat: -6.2001, lng: 106.8, at: at("08:01"), speedKmh: 0 },
        ],
        stop,
        75,
      ),
    ).toBe(false);
    expect(
      geofenceArrival(
        [
          { lat: -6.21, lng: 106.8, at: at("08:00"), speedKmh: 0 },
          { lat: -6.2001, lng: 106.8, at: at("08:01"), speedKmh: 0 },
        ],
        stop,
        75,
      ),
    ).toBe(false);
    // Without a reported speed: from the distance between the samples (11 m in 30 s ≈ 1.3 km/h).
    expect(
      geofenceArrival(
        [
          { lat: -6.2002, lng: 106.8, at: at("08:00") },
          { lat: -6.2001, lng: 106.8, at: "2026-12-01T08:00:30.000Z" },
        ],
        stop,
        75,
      ),
    ).toBe(true);
  });
});
