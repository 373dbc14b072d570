// A search thread that fails on purpose, for the pool's failure tests (started through the `start`
// parameter of solveRoutingInParallel): the threads listed in workerData.failing throw right after
// sharing their first elite, from inside the search (as a bug in the solver would), so the coordinator has
// that elite and then sees the thread die.
import { parentPort, workerData } from "node:worker_threads";
import type { ThreadMessage } from "#shared/routing-threads/protocol";

const failing = new Set<number>((workerData as { failing: number[] }).failing);
const port = parentPort!;
const post = port.postMessage.bind(port);
port.postMessage = (message: ThreadMessage) => {
  post(message);
  if (message.kind === "elite" && failing.has(message.index)) throw new Error(`search thread ${message.index} failed on purpose`);
};
await import("#shared/routing-threads/thread");
