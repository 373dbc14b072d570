// A field-operations day of the size one routing run collects: 1,500 visits around a hub, 50 vehicles
// with two capacity dimensions, tags, breaks and time windows, on the default great-circle provider.
// Generated from a seed, so every run solves the same problem.
import { checkSolution } from "#shared/routing/check";
import type { RoutingObjective, RoutingProblem, RoutingVisit } from "#shared/routing/model";
import { Random } from "#shared/routing/random";
import { solveRouting } from "#shared/routing/solver";
import { benchSolveOptions } from "./run.ts";

const HUB = { lat: 52.37, lng: 4.9 };
const DAY_START = 8 * 60;
const DAY_END = 18 * 60;

export function realisticProblem(visitCount = 1500, vehicleCount = 50, seed = 7): RoutingProblem {
  const random = new Random(seed);
  const between = (low: number, high: number) => low + random.next() * (high - low);
  const visits: RoutingVisit[] = Array.from({ length: visitCount }, (_, i) => {
    // Denser near the hub, up to ~25 km out.
    const radiusKm = 25 * Math.sqrt(random.next()) * random.next() ** 0.3;
    const angle = between(0, 2 * Math.PI);
    const location = {
      lat: HUB.lat + (radiusKm / 111.2) * Math.sin(angle),
      lng: HUB.lng + (radiusKm / (111.2 * Math.cos((HUB.lat * Math.PI) / 180))) * Math.cos(angle),
    };
    const kind = random.next();
    const windowStart = Math.round(between(DAY_START, DAY_END - 240) / 30) * 30;
    const timeWindows =
      kind < 0.5
        ? [{ start: windowStart, end: windowStart + 180 }]
        : kind < 0.7
          ? [
              { start: DAY_START, end: DAY_START + 180 },
              { start: DAY_END - 240, end: DAY_END - 60 },
            ]
          : undefined;
    return {
      id: `visit-${i + 1}`,
      location,
      visitTime: Math.round(between(5, 15)),
      timeWindows,
      demand: [Math.round(between(1, 40)), Math.round(between(1, 20)) / 10],
      requiredTags: random.next() < 0.1 ? ["refrigerated"] : undefined,
    };
  });
  const vehicles = Array.from({ length: vehicleCount }, (_, k) => ({
    id: `vehicle-${k + 1}`,
    start: HUB,
    capacity: [1200, 60],
    minCapacity: [100, 0],
    speedKmh: 35,
    workingTime: { start: DAY_START, end: DAY_END },
    breaks: [{ earliestStart: 12 * 60, latestEnd: 14 * 60, duration: 30 }],
    tags: k % 4 === 0 ? ["refrigerated"] : [],
    fixedCost: k % 4 === 0 ? 2 : 1,
  }));
  return { visits, vehicles };
}

export function runRealistic(options: {
  seconds: number;
  objective: RoutingObjective;
  seed: number;
  maxIterations?: number;
  earlyStop?: boolean;
  log: (line: string) => void;
}): void {
  const problem = realisticProblem();
  const started = performance.now();
  const solution = solveRouting(problem, benchSolveOptions(options));
  const seconds = (performance.now() - started) / 1000;
  const { violations, distance } = checkSolution(problem, solution);
  const reasons = new Map<string, number>();
  for (const dropped of solution.dropped) reasons.set(dropped.reason, (reasons.get(dropped.reason) ?? 0) + 1);
  options.log(
    `realistic ${problem.visits.length} visits × ${problem.vehicles.length} vehicles: served ${solution.totals.visits}, ` +
      `vehicles ${solution.routes.length}, distance ${(distance / 1000).toFixed(1)} km, dropped ${JSON.stringify(Object.fromEntries(reasons))}, ` +
      `iterations ${solution.iterations}, ${seconds.toFixed(1)} s, peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB, ` +
      `${violations.length === 0 ? "feasible" : `INFEASIBLE: ${violations.slice(0, 3).join("; ")}`}`,
  );
}
