import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runBenchmark, VRPTW_DATA_DIR } from "../../../bench/routing/run.ts";
import { readVrptw } from "../../../bench/routing/vrptw.ts";

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
    expect(lines.at(-1)).toMatch(/^summary: 1 instances, mean gap .*infeasible 0/);
  });
});
