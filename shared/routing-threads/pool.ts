// The parallel search: N worker threads (thread.ts), each running the solver with its own seed, that meet
// at sync points to share their best solutions. Node-only, so it lives beside the pure optimizer
// (shared/routing), which never imports it. Design and measurements: shared/routing/README.md,
// "Parallel search".
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { MessageChannel, Worker } from "node:worker_threads";
import { greatCircleTravel, travelFromSpec } from "#shared/routing/matrix";
import type { Elite, RoutingEnd, RoutingProblem, RoutingSolution, SolveOptions, TravelSpec } from "#shared/routing/model";
import { isBetter } from "#shared/routing/search";
import { DEFAULT_TIME_LIMIT_MS, describeElite, solveRouting } from "#shared/routing/solver";
import type { EliteAnswer, SyncSchedule, ThreadInput, ThreadMessage } from "./protocol.ts";

export interface ParallelSolveOptions extends Omit<SolveOptions, "now" | "exchange"> {
  /** Searches to run side by side (1: `solveRouting` itself, on the calling thread). */
  threads: number;
  /** When the searches meet; default: 10 times per run (every maxIterations / 10 iterations when there is an iteration limit, else every timeLimit / 10, 250 ms–3 s). */
  sync?: { iterations: number } | { ms: number };
}

/** Sync points per run by default, and the bounds of a time-based interval. */
const SYNCS_PER_RUN = 10;
const MIN_SYNC_MS = 250;
const MAX_SYNC_MS = 3000;

/** Lambda memory per vCPU: CPU is given in proportion to memory (1,769 MB = 1 vCPU … 10,240 MB = 6). */
export const LAMBDA_MB_PER_VCPU = 1769;

/**
 * Threads for this machine: its available cores, at most `cap` (ROUTING_THREADS) and, on Lambda
 * (`memoryMb`: AWS_LAMBDA_FUNCTION_MEMORY_SIZE), one per vCPU the memory size pays for, counting a vCPU
 * once three quarters of it are there (1,769 MB → 1, 3,538 → 2, 10,240 → 6). Lambda shows 2 cores even
 * at 512 MB, where two threads would halve the single search's ~0.29 vCPU.
 */
export function routingThreadCount(cap?: number, cores: number = availableParallelism(), memoryMb?: number): number {
  const paid = memoryMb === undefined ? cores : Math.floor(memoryMb / LAMBDA_MB_PER_VCPU + 0.25);
  return Math.max(1, Math.min(cores, cap ?? cores, paid));
}

/**
 * Solves with `threads` searches. Thread 0 (the anchor) runs exactly the single-thread search with
 * `seed`, handing its elite to the others at each sync point but never taking one; threads 1… use seeds
 * seed + 1… and, at each sync point, go on from the best elite of the others when it beats their own.
 * The answer is the best final solution (ties to the lowest thread), so it is never worse than the
 * single-thread run with the same seed and iterations per thread. With one thread, or a custom travel
 * provider (no spec to rebuild it from in another thread), this is `solveRouting`.
 *
 * Failures keep the best plan: a thread that fails (throws, exits, or does not answer within
 * `STOP_GRACE_MS` of a stop) counts with the last elite it shared, the others search on, and the answer
 * (`endedBy: "threadFailure"`) is the best of their finals and the failed threads' last elites; only
 * when no thread ever shared a plan does the solve fail. `mustStop` is polled every `STOP_POLL_MS` and
 * stops every thread with its best plan (`endedBy: "deadline"`).
 *
 * `start` starts one thread (tests start threads that fail); threads it starts are never kept.
 */
export async function solveRoutingInParallel(
  problem: RoutingProblem,
  options: ParallelSolveOptions,
  start?: (index: number) => Worker,
): Promise<RoutingSolution> {
  const { threads: requested, sync: requestedSync, ...single } = options;
  const { mustStop } = options;
  const threads = Math.max(1, Math.floor(requested));
  const travel = (problem.travel ?? greatCircleTravel()).spec;
  if (threads === 1 || !travel) return solveRouting(problem, single);

  const startedAt = Date.now();
  const timeLimitMs = options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS;
  const sync = syncSchedule(requestedSync, options.maxIterations, timeLimitMs, startedAt);
  const answered = new Int32Array(new SharedArrayBuffer(threads * Int32Array.BYTES_PER_ELEMENT));
  const stop = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  const { travel: _provider, ...plain } = problem;
  const reports: { epoch: number; elite: Elite }[][] = Array.from({ length: threads }, () => []);
  const finals: ({ solution: RoutingSolution; best: Elite } | undefined)[] = new Array(threads).fill(undefined);
  const failures: (Error | undefined)[] = new Array(threads).fill(undefined);
  const pending: { index: number; epoch: number }[] = [];
  const ports: MessageChannel["port1"][] = [];
  const lastElite = (index: number) => reports[index]!.at(-1)?.elite;

  /** What thread `index` may take at `epoch`: the best of the others' first elites of that epoch or later (or final ones; a failed thread's last); undefined until all are known. */
  const bestOfOthers = (index: number, epoch: number): Elite | null | undefined => {
    let best: Elite | null = null;
    for (let other = 0; other < threads; other++) {
      if (other === index) continue;
      const elite =
        reports[other]!.find((report) => report.epoch >= epoch)?.elite ??
        finals[other]?.best ??
        (failures[other] ? lastElite(other) : undefined);
      if (!elite) {
        if (failures[other]) continue;
        return undefined;
      }
      if (!best || isBetter(elite.dropped, elite.cost, best.dropped, best.cost)) best = elite;
    }
    return best;
  };
  const answerPending = () => {
    for (let i = pending.length - 1; i >= 0; i--) {
      const { index, epoch } = pending[i]!;
      if (failures[index]) {
        pending.splice(i, 1);
        continue;
      }
      const elite = bestOfOthers(index, epoch);
      if (elite === undefined) continue;
      pending.splice(i, 1);
      ports[index]!.postMessage({ epoch, elite } satisfies EliteAnswer);
      Atomics.store(answered, index, epoch);
      Atomics.notify(answered, index);
    }
  };

  const workers = start ? Array.from({ length: threads }, (_, index) => start(index)) : takeThreads(threads);
  let stopTimer: ReturnType<typeof setInterval> | undefined;
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await new Promise<RoutingSolution>((resolve, reject) => {
      const settleIfOver = () => {
        if (!workers.every((_, index) => finals[index] || failures[index])) return;
        const answer = bestOutcome(plain, travel, options, finals, failures, lastElite, stop[0] !== 0);
        if (answer) resolve(answer);
        else reject(failures.find(Boolean) ?? new Error("routing threads ended without a solution"));
      };
      const fail = (index: number, error: Error) => {
        if (finals[index] || failures[index]) return;
        failures[index] = error;
        answerPending();
        settleIfOver();
      };
      stopTimer = mustStop
        ? setInterval(() => {
            if (stop[0] !== 0 || !mustStop()) return;
            Atomics.store(stop, 0, 1);
            // A thread that does not end within the grace period (stuck) counts as failed.
            graceTimer = setTimeout(
              () =>
                workers.forEach((_, index) => {
                  fail(index, new Error(`routing thread ${index} did not stop within ${STOP_GRACE_MS} ms`));
                }),
              STOP_GRACE_MS,
            );
          }, STOP_POLL_MS)
        : undefined;
      workers.forEach((worker, index) => {
        const { port1, port2 } = new MessageChannel();
        ports.push(port1);
        const input: ThreadInput = {
          index,
          problem: plain,
          travel,
          seed: (options.seed ?? 1) + index,
          objective: options.objective,
          maxIterations: options.maxIterations,
          earlyStop: options.earlyStop,
          underloadCost: options.underloadCost,
          deadline: startedAt + timeLimitMs,
          sync,
          answered,
          stop,
          answers: port2,
        };
        worker.on("message", (message: ThreadMessage) => {
          if (failures[index]) return;
          if (message.kind === "elite") {
            reports[message.index]!.push({ epoch: message.epoch, elite: message.elite });
            if (message.index !== 0) pending.push({ index: message.index, epoch: message.epoch });
          } else {
            finals[message.index] = { solution: message.solution, best: message.best };
          }
          answerPending();
          settleIfOver();
        });
        worker.on("error", (error) => fail(index, error));
        worker.on("exit", (code) => fail(index, new Error(`routing thread ${index} exited (code ${code}) without a solution`)));
        worker.postMessage(input, [port2]);
      });
    });
  } finally {
    clearInterval(stopTimer);
    clearTimeout(graceTimer);
    for (const port of ports) port.close();
    // A failed thread may be stuck or broken: never kept (nor the others of a failed solve, nor test threads).
    if (start || failures.some(Boolean)) await Promise.all(workers.map((worker) => worker.terminate()));
    else returnThreads(workers);
  }
}

/** How often `mustStop` is asked, and how long threads have to end once stopped. */
export const STOP_POLL_MS = 100;
export const STOP_GRACE_MS = 2000;

/**
 * The answer of a parallel solve: the best final solution, ties to the lowest thread; with failed threads,
 * their last elites compete too (described here, on the calling thread) and the answer says
 * `threadFailure`; stopped by `mustStop`, `deadline`. Undefined when nothing was ever shared.
 */
function bestOutcome(
  problem: Omit<RoutingProblem, "travel">,
  travel: TravelSpec,
  options: ParallelSolveOptions,
  finals: ({ solution: RoutingSolution; best: Elite } | undefined)[],
  failures: (Error | undefined)[],
  lastElite: (index: number) => Elite | undefined,
  stopped: boolean,
): RoutingSolution | undefined {
  let best: { solution?: RoutingSolution; elite: Elite } | undefined;
  finals.forEach((final, index) => {
    const candidate = final
      ? { solution: final.solution, elite: final.best }
      : failures[index] && lastElite(index)
        ? { elite: lastElite(index)! }
        : undefined;
    if (candidate && (!best || isBetter(candidate.elite.dropped, candidate.elite.cost, best.elite.dropped, best.elite.cost)))
      best = candidate;
  });
  if (!best) return undefined;
  const failed = failures.some(Boolean);
  const endedBy: RoutingEnd | undefined = failed ? "threadFailure" : stopped ? "deadline" : undefined;
  if (best.solution) return endedBy ? { ...best.solution, endedBy } : best.solution;
  return describeElite({ ...problem, travel: travelFromSpec(travel) }, best.elite, options, "threadFailure");
}

/**
 * Threads kept between solves (a warm Lambda runs many): a kept thread has loaded and compiled the
 * solver already. Idle ones are unref'd, so they never keep a process alive.
 */
const idleThreads: Worker[] = [];

/** Threads kept idle for the next solve. */
export function idleRoutingThreads(): number {
  return idleThreads.length;
}

function takeThreads(count: number): Worker[] {
  const taken = idleThreads.splice(0, count);
  while (taken.length < count) taken.push(startThread());
  for (const worker of taken) worker.ref();
  return taken;
}

function returnThreads(workers: Worker[]): void {
  for (const worker of workers) {
    worker.removeAllListeners("message").removeAllListeners("error").removeAllListeners("exit");
    // A kept thread that dies while idle is dropped from the pool.
    worker.once("exit", () => {
      const at = idleThreads.indexOf(worker);
      if (at >= 0) idleThreads.splice(at, 1);
    });
    worker.unref();
    idleThreads.push(worker);
  }
}

function syncSchedule(
  requested: ParallelSolveOptions["sync"],
  maxIterations: number | undefined,
  timeLimitMs: number,
  since: number,
): SyncSchedule {
  if (requested)
    return "iterations" in requested ? { iterations: Math.max(1, Math.floor(requested.iterations)) } : { ms: requested.ms, since };
  if (maxIterations !== undefined && Number.isFinite(maxIterations))
    return { iterations: Math.max(1, Math.ceil(maxIterations / SYNCS_PER_RUN)) };
  return { ms: Math.min(MAX_SYNC_MS, Math.max(MIN_SYNC_MS, timeLimitMs / SYNCS_PER_RUN)), since };
}

/**
 * Set by the Lambda bundling (infra/bundling.ts, esbuild `define`): the file name of thread.ts's bundle,
 * written beside the run worker's index.js. Undefined when run from source.
 */
declare const BUNDLED_ROUTING_THREAD: string | undefined;

function startThread(): Worker {
  if (typeof BUNDLED_ROUTING_THREAD !== "undefined") return new Worker(join(__dirname, BUNDLED_ROUTING_THREAD));
  // From source (tsx, vitest): a Node 20 worker does not inherit tsx's loader, so the thread registers it first.
  const tsx = import.meta.resolve("tsx/esm/api");
  const entry = new URL("./thread.ts", import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(bootstrap, { eval: true });
}
