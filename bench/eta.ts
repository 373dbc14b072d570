// npm run bench:eta [-- --days 12 --visits 30 --spread 0.2 --bias 1 --seed 1]
//
// How close live ETAs come to what then happens (docs/api/execution.md, "Live route and ETAs"). Pure: no
// stack. Each simulated day is a real plan of the optimizer (2 vans, `--visits` visits around a Jakarta hub,
// a 45-minute break), dispatched, then driven: every leg takes its planned minutes × (1 ± `--spread`,
// uniform), the driver reports start, arrive and complete at the true times, service as planned. After
// each completion (and at departure) the route is projected with `projectRoute` from what was reported so
// far, and the projected arrival at the next stop — and at every later one — is compared with the true one.
// Printed: the mean and p90 absolute error of the next-stop ETA (target: mean ≤ 3 min), of all later
// stops, and of the static plan's ETAs for comparison.
import { parseArgs } from "node:util";
import { DateTime } from "luxon";
import { type ObservedStop, projectRoute, type ProjectionStop } from "#shared/domain/live/projection";
import { buildRunProblem, currentOrNextShift, describeSolution } from "#shared/domain/runs/build-problem";
import { liveRoutesOf } from "#shared/domain/runs/live-day";
import { solveRouting } from "#shared/routing/solver";
import { hub, input as planInput, vehicle, visit } from "#test/unit/runs/plan-fixtures";

const { values } = parseArgs({
  options: {
    days: { type: "string", default: "12" },
    visits: { type: "string", default: "30" },
    spread: { type: "string", default: "0.2" },
    seed: { type: "string", default: "1" },
    bias: { type: "string", default: "1" },
  },
});
const days = Number(values.days);
const visitCount = Number(values.visits);
const spread = Number(values.spread);
/** A systematic slowdown (1.2: every leg 20 % slower on average), on top of the spread. */
const bias = Number(values.bias);
let state = Number(values.seed) || 1;
const random = () => {
  state = (state * 48271) % 2147483647;
  return state / 2147483647;
};

const zone = "Asia/Jakarta";
const nextStop: number[] = [];
const laterStops: number[] = [];
const staticPlan: number[] = [];
const started = performance.now();
let routesDriven = 0;

for (let day = 0; day < days; day++) {
  const visits = Array.from({ length: visitCount }, (_, i) =>
    visit(`d${day}v${i}`, {
      coordinate: { lat: -6.2 + (random() - 0.5) * 0.25, lng: 106.8 + (random() - 0.5) * 0.25 },
      visitTime: 5 + Math.floor(random() * 10),
      capacity: { weight: 1, volume: 0 },
    }),
  );
  const vans = [
    vehicle({ _id: "van-1", tags: [], constraints: {}, breakTime: { startTime: "12:00", endTime: "12:45" } }),
    vehicle({ _id: "van-2", tags: [], constraints: {}, speed: 30, breakTime: { startTime: "12:00", endTime: "12:45" } }),
  ];
  const runAt = "2026-12-01T00:30:00.000Z"; // 07:30 in Jakarta, before the 08:00 shifts
  const run = planInput(runAt, { hub: hub(zone), vehicles: vans, visits });
  const planned = buildRunProblem(run);
  const solution = solveRouting(planned.problem, { timeLimitMs: Infinity, maxIterations: 400, seed: day + 1 });
  const { body, summary } = describeSolution(run, planned, solution);
  const live = liveRoutesOf(body.routes, {
    hubId: "hub-1",
    resultId: `r${day}`,
    timeZone: zone,
    dispatchedTime: "x",
    configurationId: "conf-1",
    planningDay: summary.planningDay,
  });
  const byId = new Map(visits.map((v) => [v._id, v]));

  body.routes.forEach((route, r) => {
    const plan = live[r]?.plan;
    if (!plan) throw new Error("no plan");
    routesDriven++;
    const van = vans.find((v) => v._id === route.vehicleId)!;
    const origin = Date.parse(plan.origin);
    const iso = (minutes: number) => new Date(origin + minutes * 60_000).toISOString();
    const toMinutes = (text: string) => (DateTime.fromFormat(text, "yyyy-MM-dd HH:mm", { zone }).toMillis() - origin) / 60_000;
    const service = route.trips.map((trip) => byId.get(trip.visitId)!.visitTime ?? run.configuration.defaultVisitTime);

    // The truth: every leg ± spread, breaks where planned and no earlier than planned.
    const truth: Array<{ started: number; arrived: number; finished: number }> = [];
    let clock = plan.departureMinutes;
    const takeBreaks = (afterOrder: number) => {
      for (const entry of plan.breaks)
        if (entry.afterOrder === afterOrder) clock = Math.max(clock, entry.startMinutes) + entry.durationMinutes;
    };
    takeBreaks(0);
    route.trips.forEach((_, i) => {
      const leg = (plan.legs[i] as number) * bias * (1 + (2 * random() - 1) * spread);
      const startedAt = clock;
      const arrived = clock + leg;
      const finished = arrived + (service[i] as number);
      truth.push({ started: startedAt, arrived, finished });
      clock = finished;
      takeBreaks(i + 1);
    });
    for (const [i, trip] of route.trips.entries())
      staticPlan.push(Math.abs(toMinutes(trip.eta) - (truth[i] as { arrived: number }).arrived));

    const shiftEnd = currentOrNextShift(van, DateTime.fromMillis(origin + plan.departureMinutes * 60_000, { zone }))
      .end.toUTC()
      .toISO() as string;
    // Projected after each completion k (k = -1: at departure, nothing reported).
    for (let k = -1; k < route.trips.length - 1; k++) {
      const now = k < 0 ? plan.departureMinutes : (truth[k] as { finished: number }).finished;
      const stops: ProjectionStop[] = route.trips.map((trip, i) => {
        const observed: ObservedStop =
          i <= k ? { startedAt: iso(truth[i]!.started), arrivedAt: iso(truth[i]!.arrived), finishedAt: iso(truth[i]!.finished) } : {};
        const stored = byId.get(trip.visitId)!;
        return {
          visitId: trip.visitId,
          status: i <= k ? "DONE" : "ASSIGNED",
          onRoute: true,
          plannedEta: trip.eta,
          coordinate: stored.coordinate,
          serviceMinutes: service[i] as number,
          timeWindows: stored.timeWindows,
          changedAt: i <= k ? iso(truth[i]!.finished) : null,
          observed,
        };
      });
      const projection = projectRoute({
        plan,
        timeZone: zone,
        stops,
        now: new Date(origin + now * 60_000),
        speedKmh: van.speed,
        roadFactor: run.configuration.roadFactor,
        shiftEnd,
        atRiskMinutes: 15,
      });
      for (let i = k + 1; i < route.trips.length; i++) {
        const error = Math.abs(toMinutes(projection.stops[i]!.projectedEta as string) - truth[i]!.arrived);
        (i === k + 1 ? nextStop : laterStops).push(error);
      }
    }
  });
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
const p90 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(0.9 * (values.length - 1))] ?? 0;
const line = (label: string, values: number[]) =>
  `${label.padEnd(34)} mean ${mean(values).toFixed(2)} min, p90 ${p90(values).toFixed(2)} min (${values.length} ETAs)`;
console.log(
  `bench:eta — ${days} days × 2 vans, ${visitCount} visits a day, ${routesDriven} routes, legs × ${bias} ± ${Math.round(spread * 100)} %`,
);
console.log(line("next stop, projected", nextStop));
console.log(line("later stops, projected", laterStops));
console.log(line("every stop, the static plan", staticPlan));
console.log(
  `target: next-stop mean ≤ 3 min — ${mean(nextStop) <= 3 ? "met" : "missed"}; ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
