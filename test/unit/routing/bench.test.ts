import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkSolution } from "#shared/routing/check";
import { euclideanTravel } from "#shared/routing/matrix";
import { solveRouting } from "#shared/routing/solver";
import { realisticDay } from "../../../bench/routing/early-stop.ts";
import { compareServed, FEATURES, featureDay, runFeatures, servedByPriority } from "../../../bench/routing/features.ts";
import { comparePlans, readReferences, runReferences } from "../../../bench/routing/references.ts";
import { costOf, familyOf, referenceFor, runBenchmark, VRPTW_DATA_DIR } from "../../../bench/routing/run.ts";
import { readBestKnown, readVrptw } from "../../../bench/routing/vrptw.ts";

describe("routing benchmark script", () => {
  it("parses a Solomon instance with CRLF line endings", () => {
    const instance = readVrptw(join(VRPTW_DATA_DIR, "solomon", "C101.txt"));
    expect(instance.name).toBe("C101");
    expect(instance.fleetSize).toBe(25);
    expect(instance.capacity).toBe(200);
    expect(instance.nodes).toHaveLength(101);
    expect(instance.nodes[0]).toEqual({ id: 0, x: 40, y: 50, demand: 0, ready: 0, due: 1236, service: 0 });
  });

  it("solves, re-checks and scores one Solomon instance", () => {
    const lines: string[] = [];
    const summary = runBenchmark({
      set: "solomon",
      dataDir: VRPTW_DATA_DIR,
      only: ["R101"],
      seconds: 600,
      maxIterations: 300,
      objective: "distance",
      seed: 1,
      log: (line) => lines.push(line),
    });
    expect(summary.results).toHaveLength(1);
    const [result] = summary.results;
    expect(result!.feasible).toBe(true);
    expect(result!.best).toEqual({ vehicles: 20, distance: 1642.88 });
    expect(result!.gap).toBeCloseTo(((result!.distance - 1642.88) / 1642.88) * 100, 9);
    expect(result!.gap).toBeLessThan(10);
    expect(summary.infeasible).toBe(0);
    expect(lines.at(-1)).toMatch(/^summary: 1 instances, \d+ vehicles \(bks 20\), mean gap .*infeasible 0/);
  });

  it("DIMACS convention: arcs truncated to one decimal", () => {
    const exact = euclideanTravel().distances([
      { lat: 0, lng: 0 },
      { lat: 1, lng: 1 },
      { lat: 4, lng: 3 },
    ]);
    const dimacs = euclideanTravel({ truncate: true }).distances([
      { lat: 0, lng: 0 },
      { lat: 1, lng: 1 },
      { lat: 4, lng: 3 },
    ]);
    expect(exact[1]).toBeCloseTo(Math.SQRT2, 12);
    expect(dimacs[1]).toBe(1.4);
    expect(dimacs[2]).toBe(5); // exact lengths stay whole
  });

  it("reads the references: DIMACS GH1000 without vehicles, the Solomon lower bounds flagged", () => {
    const dimacs = readBestKnown(join(VRPTW_DATA_DIR, "bks_gh_dimacs.csv"));
    expect(dimacs.size).toBe(60);
    expect(dimacs.get("c1_10_1")!.distance).toBe(42444.8);
    expect(dimacs.get("c1_10_1")!.vehicles).toBeNaN();
    const solomon = readBestKnown(join(VRPTW_DATA_DIR, "bks_solomon_distance_only.csv"));
    expect(solomon.get("r109")).toEqual({ vehicles: 13, distance: 1146.9, lowerBound: true });
    expect(solomon.get("rc103")).toEqual({ vehicles: 11, distance: 1258.0, lowerBound: true });
    expect(solomon.get("r101")!.lowerBound).toBeUndefined();
    expect(referenceFor("gh1000", "distance", "dimacs")).toEqual({ file: "bks_gh_dimacs.csv", kind: "gap" });
    expect(referenceFor("gh400", "distance", "exact")).toEqual({ file: "bks_hierarchical.csv", kind: "context" });
    expect(() => referenceFor("gh200", "distance", "dimacs")).toThrow(/no DIMACS reference/);
    expect(familyOf("rc1_10_3")).toBe("rc1");
    expect(familyOf("RC103")).toBe("RC1");
  });

  it("scores a GH1000 instance in the DIMACS convention, per family", () => {
    const lines: string[] = [];
    const summary = runBenchmark({
      set: "gh1000",
      dataDir: VRPTW_DATA_DIR,
      only: ["c1_10_1"],
      seconds: 600,
      maxIterations: 20,
      objective: "distance",
      convention: "dimacs",
      seed: 1,
      log: (line) => lines.push(line),
    });
    const [result] = summary.results;
    expect(result!.feasible).toBe(true);
    expect(result!.best.distance).toBe(42444.8);
    expect(result!.gap).toBeGreaterThan(-0.5);
    expect(summary.families).toEqual([expect.objectContaining({ family: "c1", instances: 1 })]);
    expect(lines.at(-1)).toMatch(/^summary: 1 instances, \d+ vehicles, mean gap/);
  }, 120_000);

  it("builds each feature day as described, the same for the same seed", () => {
    const plain = featureDay("maxVisits", 40, 3);
    expect(featureDay("maxVisits", 40, 3)).toEqual(plain);
    expect(plain.vehicles.every((vehicle) => vehicle.maxVisits === 18)).toBe(true);

    const pairs = featureDay("pairs", 40, 3).visits;
    expect(pairs.filter((visit) => visit.pickupVisitId)).toHaveLength(20);
    expect(pairs[1]!.pickupVisitId).toBe(pairs[0]!.id);

    const overloaded = featureDay("overloaded", 100, 3);
    expect(overloaded.vehicles).toHaveLength(3); // 60 % of the plain day's 5
    expect(new Set(overloaded.visits.map((visit) => visit.priority))).toEqual(new Set([1, 2, 3, 4, 5]));

    const away = featureDay("away", 40, 3).vehicles;
    expect(away.every((vehicle) => vehicle.end && (vehicle.end.lat !== vehicle.start.lat || vehicle.end.lng !== vehicle.start.lng))).toBe(
      true,
    );

    const asymmetric = featureDay("asymmetric", 40, 3);
    const [a, b] = asymmetric.visits.map((visit) => visit.location);
    const there = asymmetric.travel!.distances([a!, b!]);
    expect(there[1]).not.toBeCloseTo(there[2]!, 3); // a → b is not b → a
    expect(asymmetric.travel!.travelMinutes(there, 35, [a!, b!])[1]).toBeGreaterThan(0);
  });

  it("ranks served visits by priority first, as the hierarchical objective does", () => {
    expect(compareServed([1, 0, 0, 0, 0], [0, 9, 9, 9, 9])).toBeGreaterThan(0);
    expect(compareServed([0, 2, 0, 0, 0], [0, 2, 1, 0, 0])).toBeLessThan(0);
    expect(compareServed([0, 0, 3, 0, 0], [0, 0, 3, 0, 0])).toBe(0);
    const problem = featureDay("overloaded", 40, 2);
    const served = servedByPriority(problem, {
      routes: [{ stops: problem.visits.slice(0, 4).map((visit) => ({ visitId: visit.id })) }],
    } as never);
    const expected = [0, 0, 0, 0, 0];
    for (const visit of problem.visits.slice(0, 4)) expected[5 - visit.priority!]!++;
    expect(served).toEqual(expected);
  });

  it("solves every feature day and holds each plan to the checker", () => {
    const lines: string[] = [];
    runFeatures({
      visits: 30,
      seeds: [1],
      seconds: 60,
      maxIterations: 200,
      objective: "hierarchical",
      earlyStop: true,
      log: (line) => lines.push(line),
    });
    expect(lines.filter((line) => line.endsWith("0 violations") && line.startsWith("day 1 "))).toHaveLength(FEATURES.length);
    expect(lines.at(-1)).toBe(`summary: ${FEATURES.length} feature runs, 0 violations`);
  }, 60_000);

  it("orders plans as the hierarchical objective does: served weight, then fleet cost, then cost", () => {
    const plan = { servedByPriority: [0, 0, 40, 0, 0], fleetCost: 3, cost: 100 };
    expect(comparePlans({ ...plan, servedByPriority: [0, 1, 39, 0, 0], cost: 900 }, plan)).toBeLessThan(0);
    expect(comparePlans({ ...plan, fleetCost: 2, cost: 900 }, plan)).toBeLessThan(0);
    expect(comparePlans({ ...plan, cost: 99 }, plan)).toBeLessThan(0);
    expect(comparePlans({ ...plan, cost: 101 }, plan)).toBeGreaterThan(0);
    expect(comparePlans(plan, { ...plan })).toBe(0);
  });

  it("pools reference plans: a later run adds its runs and keeps the best plan found", () => {
    const directory = mkdtempSync(join(tmpdir(), "references-"));
    try {
      const file = join(directory, "references.json");
      const pool = (runs: number) => {
        const lines: string[] = [];
        runReferences({
          file,
          visits: 20,
          seeds: [1, 2],
          runs,
          seconds: 60,
          maxIterations: 300,
          objective: "hierarchical",
          log: (line) => lines.push(line),
        });
        return lines;
      };
      const first = pool(2);
      const second = pool(1);
      const plans = readReferences(file).plans;
      expect(plans.map((plan) => [plan.day, plan.runs])).toEqual([
        [1, 3],
        [2, 3],
      ]);
      for (const plan of plans) {
        // Every run of these days serves all 20 with the same fleet, so the best is the lowest cost logged.
        const runs = [...first, ...second]
          .filter((line) => line.startsWith(`day ${plan.day} run `))
          .map((line) => /served ([\d/]+), fixed (\d+), ([\d.]+), \d+ it/.exec(line)!);
        expect(runs).toHaveLength(3);
        expect(new Set(runs.map((match) => `${match[1]} ${match[2]}`))).toEqual(new Set([`0/0/20/0/0 ${plan.fleetCost}`]));
        const costs = runs.map((match) => Number(match[3]));
        expect(plan.cost).toBeCloseTo(Math.min(...costs), 1);
        expect(plan.routes.flatMap((route) => route.visitIds)).toHaveLength(plan.servedByPriority.reduce((sum, count) => sum + count, 0));
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it("the committed reference plans are what they claim: each day's routes, warm-started without search, give its cost and fleet, checked", () => {
    const directory = fileURLToPath(new URL("../../../bench/routing/references/", import.meta.url));
    const files = readdirSync(directory).filter((name) => name.endsWith(".json"));
    expect(files).toEqual(expect.arrayContaining(["realistic-100-hierarchical.json", "realistic-300-hierarchical.json"]));
    const plans = files.flatMap((name) => readReferences(join(directory, name)).plans);
    expect(plans.length).toBeGreaterThanOrEqual(16);
    for (const plan of plans) {
      const problem = { ...realisticDay(plan.visits, plan.day), initialRoutes: plan.routes };
      const solution = solveRouting(problem, { seed: 1, objective: plan.objective, maxIterations: 0, earlyStop: false });
      expect(checkSolution(problem, solution).violations).toEqual([]);
      expect(solution.routes.map((route) => ({ vehicleId: route.vehicleId, visitIds: route.stops.map((stop) => stop.visitId) }))).toEqual(
        plan.routes,
      );
      expect(servedByPriority(problem, solution)).toEqual(plan.servedByPriority);
      expect(solution.totals.fixedCost).toBe(plan.fleetCost);
      expect(costOf(solution)).toBeCloseTo(plan.cost, 2);
      expect(plan.runs).toBeGreaterThanOrEqual(10);
    }
  });
});
