import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { checkSolution } from "#shared/routing/check";
import type { RoutingProblem, RoutingSolution, TravelProvider } from "#shared/routing/model";
import { solveRouting, solveRoutingWithElite } from "#shared/routing/solver";
import { idleRoutingThreads, routingThreadCount, solveRoutingInParallel } from "#shared/routing-threads/pool";
import type { ThreadMessage } from "#shared/routing-threads/protocol";
import { randomProblem } from "./random-problem.ts";

// Iteration-limited, so that every run (and every sync point: every 60 iterations) is deterministic.
const problem = randomProblem(7, 30);
const options = { seed: 3, timeLimitMs: Infinity, maxIterations: 600, objective: "distance" as const };
const single = solveRouting(problem, options);

/** Fewer visits dropped, then less distance: the distance objective's order. */
const notWorse = (solution: RoutingSolution, than: RoutingSolution) =>
  solution.dropped.length < than.dropped.length ||
  (solution.dropped.length === than.dropped.length && solution.totals.distance <= than.totals.distance + 1e-9);

describe("solveRoutingInParallel", () => {
  it("with one thread is exactly the single-thread solve", async () => {
    expect(await solveRoutingInParallel(problem, { ...options, threads: 1 })).toEqual(single);
  });

  it("with two threads returns a feasible solution no worse than one thread with the same iterations per thread, the same every time", async () => {
    const first = await solveRoutingInParallel(problem, { ...options, threads: 2 });
    expect(checkSolution(problem, first).violations).toEqual([]);
    expect(notWorse(first, single)).toBe(true);
    expect(await solveRoutingInParallel(problem, { ...options, threads: 2 })).toEqual(first);
  }, 60_000);

  it("keeps its threads for the next solve instead of starting new ones", async () => {
    await solveRoutingInParallel(problem, { ...options, maxIterations: 50, threads: 2 });
    const kept = idleRoutingThreads();
    expect(kept).toBeGreaterThanOrEqual(2);
    await solveRoutingInParallel(problem, { ...options, maxIterations: 50, threads: 2 });
    expect(idleRoutingThreads()).toBe(kept);
  }, 60_000);

  it("hands the best elite on: three threads under the hierarchical objective are no worse than the anchor alone", async () => {
    const hierarchical = { ...options, objective: "hierarchical" as const, maxIterations: 300 };
    const alone = solveRouting(problem, hierarchical);
    const three = await solveRoutingInParallel(problem, { ...hierarchical, threads: 3, sync: { iterations: 25 } });
    expect(checkSolution(problem, three).violations).toEqual([]);
    const key = (s: RoutingSolution) => [s.dropped.length, s.totals.fixedCost, s.totals.distance] as const;
    const [dropped, fixed, distance] = key(three);
    const [aloneDropped, aloneFixed, aloneDistance] = key(alone);
    expect(
      dropped < aloneDropped ||
        (dropped === aloneDropped && (fixed < aloneFixed || (fixed === aloneFixed && distance <= aloneDistance + 1e-9))),
    ).toBe(true);
  }, 60_000);

  it("solves a problem with a custom travel provider (which cannot be rebuilt in a thread) on the calling thread", async () => {
    const custom: RoutingProblem = { ...problem, travel: { ...(problem.travel as TravelProvider), spec: undefined } };
    expect(await solveRoutingInParallel(custom, { ...options, threads: 2 })).toEqual(solveRouting(custom, options));
  });
});

/** Threads that run failing-thread.ts: right after sharing their first elite, those in `failing` throw, those in `stuck` block for ever. */
const failingThreads =
  (failing: number[], stuck: number[] = []) =>
  (_index: number) => {
    const tsx = import.meta.resolve("tsx/esm/api");
    const entry = new URL("./failing-thread.ts", import.meta.url).href;
    const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(bootstrap, { eval: true, workerData: { failing, stuck } });
  };

/** Starts threads with `start` and records which threads have shared an elite: a stop driven by the search's own events, not the wall clock. */
function observed(start: (index: number) => Worker): { start: (index: number) => Worker; shared: Set<number> } {
  const shared = new Set<number>();
  return {
    shared,
    start: (index) => {
      const worker = start(index);
      worker.on("message", (message: ThreadMessage) => {
        if (message.kind === "elite") shared.add(message.index);
      });
      return worker;
    },
  };
}

describe("solveRoutingInParallel when threads fail", () => {
  const hierarchical = { ...options, maxIterations: 400, sync: { iterations: 40 } };

  it("keeps the run: a failed thread's last shared plan competes with the others' finals, and the answer says threadFailure", async () => {
    const solution = await solveRoutingInParallel(problem, { ...hierarchical, threads: 2 }, failingThreads([1]));
    expect(solution.endedBy).toBe("threadFailure");
    expect(checkSolution(problem, solution).violations).toEqual([]);
    // The anchor (thread 0) searched on to its limit: the answer is no worse than the single-thread run.
    const alone = solveRouting(problem, { ...options, maxIterations: 400 });
    expect(notWorse(solution, alone)).toBe(true);
  }, 60_000);

  it("when every thread fails, answers with the best plan they shared last (rebuilt on the calling thread)", async () => {
    const solution = await solveRoutingInParallel(problem, { ...hierarchical, threads: 2 }, failingThreads([0, 1]));
    expect(solution.endedBy).toBe("threadFailure");
    expect(solution.totals.visits).toBeGreaterThan(0);
    expect(checkSolution(problem, solution).violations).toEqual([]);
  }, 60_000);

  it("a thread that does not end within the grace period after mustStop counts as failed; the others' plans are kept", async () => {
    // The stop comes once both threads have shared an elite (thread 1 is stuck from then on).
    const threads = observed(failingThreads([], [1]));
    const solution = await solveRoutingInParallel(
      problem,
      {
        ...options,
        maxIterations: undefined,
        timeLimitMs: Infinity,
        earlyStop: false,
        threads: 2,
        sync: { iterations: 40 },
        mustStop: () => threads.shared.size === 2,
      },
      threads.start,
    );
    expect(threads.shared).toEqual(new Set([0, 1]));
    expect(solution.endedBy).toBe("threadFailure");
    expect(checkSolution(problem, solution).violations).toEqual([]);
  }, 60_000);

  it("mustStop ends every thread with its best plan (deadline)", async () => {
    // No time or iteration limit: only mustStop ends it, once both threads have shared an elite.
    const threads = observed(failingThreads([]));
    const solution = await solveRoutingInParallel(
      problem,
      {
        ...options,
        maxIterations: undefined,
        timeLimitMs: Infinity,
        earlyStop: false,
        threads: 2,
        sync: { iterations: 40 },
        mustStop: () => threads.shared.size === 2,
      },
      threads.start,
    );
    expect(solution.endedBy).toBe("deadline");
    expect(checkSolution(problem, solution).violations).toEqual([]);
  }, 60_000);
});

describe("solveRouting with an elite exchange", () => {
  const long = solveRoutingWithElite(problem, { ...options, maxIterations: 3000 });
  const short = { ...options, maxIterations: 40 };
  const handing = (elite: typeof long.best) => {
    const epochs: number[] = [];
    const exchange = {
      epoch: (iterations: number) => Math.floor(iterations / 10),
      sync: (epoch: number) => {
        epochs.push(epoch);
        return elite;
      },
    };
    return { solution: solveRouting(problem, { ...short, exchange }), epochs };
  };

  it("meets at every new epoch and goes on from a better elite", () => {
    const lone = solveRouting(problem, short);
    // Better by the objective (visits served first: the random problem cannot serve them all), not only by distance.
    expect(notWorse(long.solution, lone) && !notWorse(lone, long.solution)).toBe(true);
    const { solution, epochs } = handing(long.best);
    expect(epochs).toEqual([1, 2, 3]);
    expect(notWorse(solution, long.solution)).toBe(true);
    expect(checkSolution(problem, solution).violations).toEqual([]);
  });

  it("ignores an elite that is not better than its own best", () => {
    const worse = solveRoutingWithElite(problem, { ...options, maxIterations: 1 }).best;
    expect(handing({ ...worse, cost: Number.MAX_VALUE }).solution).toEqual(solveRouting(problem, short));
  });
});

describe("routingThreadCount", () => {
  it.each([
    [undefined, 1, 1],
    [undefined, 6, 6],
    [2, 6, 2],
    [8, 2, 2],
    [1, 6, 1],
  ])("cap %s on %i cores gives %i threads", (cap, cores, threads) => {
    expect(routingThreadCount(cap, cores)).toBe(threads);
  });

  it.each([
    [512, 1],
    [1769, 1],
    [2600, 1],
    [3538, 2],
    [5307, 3],
    [10_240, 6],
  ])("on Lambda follows the memory size: %i MB gives %i threads (6 cores shown)", (memoryMb, threads) => {
    expect(routingThreadCount(undefined, 6, memoryMb)).toBe(threads);
    expect(routingThreadCount(1, 6, memoryMb)).toBe(1);
  });
});
