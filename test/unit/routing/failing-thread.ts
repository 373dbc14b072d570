// A search thread that fails on purpose, for the pool's failure tests (started through the `start`
// parameter of solveRoutingInParallel): right after sharing their first elite, the threads listed in
// workerData.failing throw from inside the search (as a bug in the solver would), so the coordinator has that
// elite and then sees the thread die; those in workerData.stuck block for ever (as an endless loop would).
import { parentPort, workerData } from "node:worker_threads";
import type { ThreadMessage } from "#shared/routing-threads/protocol";

const { failing = [], stuck = [] } = workerData as { failing?: number[]; stuck?: number[] };
const port = parentPort!;
const post = port.postMessage.bind(port);
port.postMessage = (message: ThreadMessage) => {
  post(message);
  if (message.kind !== "elite") return;
  if (failing.includes(message.index)) throw new Error(`search thread ${message.index} failed on purpose`);
  if (stuck.includes(message.index)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
};
await import("#shared/routing-threads/thread");
