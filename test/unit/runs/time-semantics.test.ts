import { describe, expect, it } from "vitest";
import { buildRunProblem, describeSolution, planningOrigin, type RunPlanInput, wallClockAt } from "#shared/domain/runs/build-problem";
import { planViolations } from "#shared/domain/runs/check-plan";
import { solveRouting } from "#shared/routing/solver";
import { hub, input, profile, vehicle, visit } from "#test/unit/runs/plan-fixtures";

/** Plans a run and returns its answered body, asserting the plan passes every check the run worker makes. */
function plan(run: RunPlanInput) {
  const planned = buildRunProblem(run);
  const solution = solveRouting(planned.problem, { timeLimitMs: Infinity, maxIterations: 200 });
  const described = describeSolution(run, planned, solution);
  expect(planViolations(run, planned, solution, described.body)).toEqual([]);
  return described;
}

const seconds = [0, 29, 30, 59];
const within = (value: string | undefined, from: string, to: string) => value !== undefined && value >= from && value <= to;

/** Around a depot: visits whose windows open at whole minutes a little after the run. */
function windowedDay(runAtIso: string, zone: string, overrides: Partial<RunPlanInput> = {}): RunPlanInput {
  const near = (i: number) => ({ lat: -6.2 + 0.004 * ((i % 5) - 2), lng: 106.8 + 0.004 * (Math.floor(i / 5) - 2) });
  return input(runAtIso, {
    hub: hub(zone),
    vehicles: [
      vehicle({
        _id: "v1",
        tags: [],
        workingTime: { startTime: "06:00", endTime: "20:00", multiday: 0 },
        breakTime: { startTime: "12:00", endTime: "12:30" },
        constraints: {},
      }),
      vehicle({ _id: "v2", tags: [], workingTime: { startTime: "09:00", endTime: "17:00", multiday: 0 }, constraints: {} }),
    ],
    visits: Array.from({ length: 10 }, (_, i) =>
      visit(`w${i}`, {
        coordinate: near(i),
        visitTime: 7,
        timeWindows: [{ startTime: `${String(10 + (i % 6)).padStart(2, "0")}:00`, endTime: `${String(10 + (i % 6)).padStart(2, "0")}:20` }],
      }),
    ),
    ...overrides,
  });
}

describe("Domain: the wall-clock semantics of plans", () => {
  it("plans on the run's minute: the origin drops the seconds, nothing is planned before the run instant", () => {
    const run = new Date("2026-03-02T03:15:40.250Z");
    expect(planningOrigin(run).toISOString()).toBe("2026-03-02T03:15:00.000Z");
    const planned = buildRunProblem(
      input(run.toISOString(), { vehicles: [vehicle({ workingTime: { startTime: "00:00", endTime: "23:59", multiday: 0 } })] }),
    );
    expect(planned.problem.vehicles[0]?.workingTime.start).toBeCloseTo(40.25 / 60, 9);
    // Printed cut to the minute, never rounded up: 59.99 minutes after 03:15 is still 04:14.
    expect(wallClockAt(run, 59.99, "UTC")).toBe("2026-03-02 04:14");
    expect(wallClockAt(run, 60 - 1e-9, "UTC")).toBe("2026-03-02 04:15");
  });

  it("answers the issue's reproduction at second 40: the visit at 13:00, the break at 12:00 (Asia/Jakarta)", () => {
    // 10:15:40 in Jakarta (UTC+7).
    const run = input("2026-03-02T03:15:40Z", {
      hub: hub("Asia/Jakarta"),
      configuration: profile({ timeLimitSeconds: 1 }),
      vehicles: [
        vehicle({
          tags: [],
          workingTime: { startTime: "08:00", endTime: "18:00", multiday: 0 },
          breakTime: { startTime: "12:00", endTime: "12:30" },
        }),
      ],
      visits: [visit("a", { timeWindows: [{ startTime: "13:00", endTime: "13:30" }] })],
    });
    const { body } = plan(run);
    expect(body.routes[0]?.trips[0]?.serviceStart).toBe("2026-03-02 13:00");
    expect(body.routes[0]?.breaks[0]).toMatchObject({ start: "2026-03-02 12:00", end: "2026-03-02 12:30" });
  });

  for (const second of seconds) {
    it(`keeps every answered time inside its window, break window and shift for a run at second ${second} (Asia/Jakarta)`, () => {
      const { body } = plan(windowedDay(`2026-03-02T01:07:${String(second).padStart(2, "0")}Z`, "Asia/Jakarta"));
      expect(body.routes.flatMap((route) => route.trips).length).toBeGreaterThan(5);
      for (const trip of body.routes.flatMap((route) => route.trips)) {
        const hour = Number(trip.visitId.slice(1)) % 6;
        expect(trip.serviceStart >= `2026-03-02 ${String(10 + hour).padStart(2, "0")}:00`).toBe(true);
      }
      for (const entry of body.routes.flatMap((route) => route.breaks)) {
        expect(entry.start >= "2026-03-02 12:00" && entry.end <= "2026-03-02 12:30").toBe(true);
      }
    });

    it(`keeps a run at second ${second} inside a night shift across the change to summer time (Europe/Berlin)`, () => {
      // 29 March 2026: 02:00 becomes 03:00 in Berlin. The run is at 23:30:ss on the 28th (22:30Z, UTC+1).
      const run = input(`2026-03-28T22:30:${String(second).padStart(2, "0")}Z`, {
        hub: hub("Europe/Berlin"),
        vehicles: [
          vehicle({
            tags: [],
            workingTime: { startTime: "22:00", endTime: "06:00", multiday: 1 },
            breakTime: { startTime: "03:00", endTime: "03:20" },
            constraints: {},
          }),
        ],
        visits: [
          visit("before", { timeWindows: [{ startTime: "2026-03-29 01:30", endTime: "2026-03-29 01:45" }] }),
          visit("after", { timeWindows: [{ startTime: "2026-03-29 04:00", endTime: "2026-03-29 04:10" }] }),
          visit("end", { timeWindows: [{ startTime: "2026-03-29 05:30", endTime: "2026-03-29 05:40" }] }),
        ],
      });
      const { body, summary } = plan(run);
      expect(summary.visitsAssigned).toBe(3);
      const [route] = body.routes;
      const starts = route?.trips.map((trip) => trip.serviceStart) ?? [];
      expect(within(starts[0], "2026-03-29 01:30", "2026-03-29 01:45")).toBe(true);
      expect(within(starts[1], "2026-03-29 04:00", "2026-03-29 04:10")).toBe(true);
      expect(within(starts[2], "2026-03-29 05:30", "2026-03-29 05:40")).toBe(true);
      expect(within(route?.breaks[0]?.start, "2026-03-29 03:00", "2026-03-29 03:20")).toBe(true);
      expect(within(route?.breaks[0]?.end, "2026-03-29 03:00", "2026-03-29 03:20")).toBe(true);
      expect(route!.arrival <= "2026-03-29 06:00").toBe(true);
    });
  }

  it("reads H:i windows as wall clocks on a day that changes to winter time (Europe/Berlin, 25 October 2026)", () => {
    // 02:00–03:00 happens twice that night; a 14:00 window is 13:00Z, not 14:00 plus a day's minutes.
    const run = input("2026-10-25T05:00:30Z", {
      hub: hub("Europe/Berlin"),
      vehicles: [vehicle({ tags: [], workingTime: { startTime: "00:00", endTime: "23:00", multiday: 0 }, constraints: {} })],
      visits: [visit("a", { timeWindows: [{ startTime: "14:00", endTime: "14:10" }] })],
    });
    const { body } = plan(run);
    expect(within(body.routes[0]?.trips[0]?.serviceStart, "2026-10-25 14:00", "2026-10-25 14:10")).toBe(true);
  });

  it("keeps a multi-day shift (08:00 to 18:00 the next day) and its windows on both days", () => {
    for (const second of seconds) {
      const run = input(`2026-03-02T08:00:${String(second).padStart(2, "0")}Z`, {
        hub: hub("UTC"),
        vehicles: [vehicle({ tags: [], workingTime: { startTime: "08:00", endTime: "18:00", multiday: 1 }, constraints: {} })],
        visits: [
          visit("first", { timeWindows: [{ startTime: "2026-03-02 16:00", endTime: "2026-03-02 16:05" }] }),
          visit("second", { timeWindows: [{ startTime: "2026-03-03 17:30", endTime: "2026-03-03 17:35" }] }),
        ],
      });
      const { body } = plan(run);
      expect(body.routes[0]!.departure >= "2026-03-02 08:00").toBe(true);
      const [first, next] = body.routes[0]?.trips.map((trip) => trip.serviceStart) ?? [];
      expect(within(first, "2026-03-02 16:00", "2026-03-02 16:05")).toBe(true);
      expect(within(next, "2026-03-03 17:30", "2026-03-03 17:35")).toBe(true);
      expect(body.routes[0]!.arrival <= "2026-03-03 18:00").toBe(true);
    }
  });
});
