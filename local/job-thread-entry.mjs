import { parentPort, workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";
import { basename } from "node:path";

/**
 * The inside of a job thread (see job-thread.ts). Plain JavaScript: a worker thread starts without
 * the main thread's TypeScript loader, so it registers tsx itself before loading the handler module
 * once; then it runs one event per message, each in its own invocation scope with a Lambda context
 * (the thread inherits AWS_LAMBDA_MAX_CONCURRENCY, so Powertools expects that scope, as on Lambda).
 */
register();
// The thread's env is a copy of the parent's, which set AWS_LAMBDA_MAX_CONCURRENCY once its own store
// existed; this thread has none until invokeHandler makes it (and sets the variable again).
delete process.env.AWS_LAMBDA_MAX_CONCURRENCY;
const { handler } = await import(workerData.handlerModule);
const { invokeHandler, jobContext } = await import(new URL("./invocation.ts", import.meta.url).href);
const functionName = basename(workerData.handlerModule).replace(/\.[cm]?[jt]s$/, "");

parentPort.on("message", async ({ id, event }) => {
  try {
    parentPort.postMessage({ id, result: await invokeHandler(handler, event, jobContext(functionName, workerData.timeoutSeconds)) });
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
