// What the parallel search's threads and their coordinator (pool.ts) post to each other. Plain data only:
// the travel provider travels as its spec, the problem without it.
import type { MessagePort } from "node:worker_threads";
import type { Elite, RoutingObjective, RoutingProblem, RoutingSolution, TravelSpec } from "#shared/routing/model";

/** When the searches meet: every `iterations` iterations (deterministic), or every `ms` of wall time since `since`. */
export type SyncSchedule = { iterations: number } | { ms: number; since: number };

export interface ThreadInput {
  /** 0 is the anchor: it runs exactly the single-thread search (it shares its elites, never takes one). */
  index: number;
  problem: Omit<RoutingProblem, "travel">;
  travel: TravelSpec;
  seed: number;
  objective?: RoutingObjective;
  maxIterations?: number;
  earlyStop?: boolean;
  underloadCost?: number;
  /** Absolute `Date.now()` time by which the search must end (Infinity: iterations only). */
  deadline: number;
  sync: SyncSchedule;
  /** Per thread, the last epoch the coordinator has answered (Atomics.wait on it while waiting for an answer). */
  answered: Int32Array;
  /** Set (to 1) by the coordinator when every search must end now with its best plan. */
  stop: Int32Array;
  /** The coordinator's answers (`EliteAnswer`), read synchronously with receiveMessageOnPort. */
  answers: MessagePort;
}

/** Thread → coordinator, on the thread's parentPort. */
export type ThreadMessage =
  | { kind: "elite"; index: number; epoch: number; elite: Elite }
  | { kind: "done"; index: number; solution: RoutingSolution; best: Elite };

/** Coordinator → thread: the best elite of the other threads at `epoch` (null: none of them has finished a search). */
export interface EliteAnswer {
  epoch: number;
  elite: Elite | null;
}
