import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bundleEntries, companionEntries, ROUTING_THREAD_BUNDLE } from "#infra/bundling";
import { repositoryRoot } from "#infra/repository-root";
import { checkSolution } from "#shared/routing/check";
import { solveRoutingInParallel } from "#shared/routing-threads/pool";
import { randomProblem } from "./random-problem.ts";

// The deployed run worker starts its threads from routing-thread.js beside its index.js: bundle the
// worker as the stack does, and the parallel solver itself with the same companion, then run the bundle.
const workerEntry = "functions/jobs/routing-run.ts";
const poolEntry = "shared/routing-threads/pool.ts";
const outdir = mkdtempSync(join(tmpdir(), "routing-thread-bundle-"));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe("the parallel search in the Lambda bundle", () => {
  const bundles = bundleEntries([workerEntry, poolEntry], {
    repositoryRoot,
    outdir,
    sourceMaps: false,
    companions: { ...companionEntries, [poolEntry]: companionEntries[workerEntry]! },
  });

  it("puts the thread entry beside the run worker's index.js", () => {
    const directory = bundles.get(workerEntry)!;
    expect(existsSync(join(directory, "index.js"))).toBe(true);
    expect(existsSync(join(directory, `${ROUTING_THREAD_BUNDLE}.js`))).toBe(true);
  });

  it("starts its threads from the bundle and finds what the source run finds", async () => {
    const bundled = createRequire(import.meta.url)(join(bundles.get(poolEntry)!, "index.js")) as {
      solveRoutingInParallel: typeof solveRoutingInParallel;
    };
    const problem = randomProblem(5, 25);
    const options = { seed: 2, timeLimitMs: Infinity, maxIterations: 300, objective: "distance" as const, threads: 2 };
    const solution = await bundled.solveRoutingInParallel(problem, options);
    expect(checkSolution(problem, solution).violations).toEqual([]);
    expect(solution).toEqual(await solveRoutingInParallel(problem, options));
  }, 120_000);
});
