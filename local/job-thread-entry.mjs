import { parentPort, workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

/**
 * The inside of a job thread (see job-thread.ts). Plain JavaScript: a worker thread starts without
 * the main thread's TypeScript loader, so it registers tsx itself before loading the handler module
 * once; then it runs one event per message.
 */
register();
const { handler } = await import(workerData.handlerModule);

parentPort.on("message", async ({ id, event }) => {
  try {
    parentPort.postMessage({ id, result: await handler(event) });
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
