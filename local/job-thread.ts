import { Worker } from "node:worker_threads";

/**
 * Runs a job handler module (functions/jobs/*.ts) in a worker thread, as Lambda runs each function
 * in its own execution environment: a CPU-bound job (the optimizer works for the run's whole time
 * budget) then never holds up the gateway's requests. One invocation at a time, like one warm Lambda
 * instance; a thread that dies is replaced at the next invocation (a cold start). The thread's entry
 * (job-thread-entry.mjs) registers tsx itself, so handler modules are the same .ts files Lambda bundles.
 */
export interface JobThread<TEvent, TResult> {
  invoke(event: TEvent): Promise<TResult>;
  stop(): Promise<void>;
}

interface Invocation {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

type ThreadMessage = { id: number; result: unknown } | { id: number; error: string };

/** `timeoutSeconds` is the function's Lambda timeout: the thread's context counts down from it, as Lambda's does. */
export function startJobThread<TEvent, TResult>(handlerModule: string, timeoutSeconds = 900): JobThread<TEvent, TResult> {
  let worker: Worker | undefined;
  let stopped = false;
  let nextId = 0;
  const pending = new Map<number, Invocation>();
  // Invocations wait for the one before them, as SQS waits for a Lambda instance's previous batch.
  let queue: Promise<unknown> = Promise.resolve();

  const failAll = (error: Error) => {
    for (const invocation of pending.values()) invocation.reject(error);
    pending.clear();
    worker = undefined;
  };

  const thread = (): Worker => {
    if (worker) return worker;
    const started = new Worker(new URL("./job-thread-entry.mjs", import.meta.url), { workerData: { handlerModule, timeoutSeconds } });
    started.on("message", (message: ThreadMessage) => {
      const invocation = pending.get(message.id);
      pending.delete(message.id);
      if ("error" in message) invocation?.reject(new Error(message.error));
      else invocation?.resolve(message.result);
    });
    started.on("error", (error) => failAll(error));
    started.on("exit", (code) => {
      if (worker === started) failAll(new Error(`job thread for ${handlerModule} exited with code ${code}`));
    });
    worker = started;
    return started;
  };

  const run = (event: TEvent) =>
    new Promise<TResult>((resolve, reject) => {
      if (stopped) return reject(new Error("job thread stopped"));
      const id = nextId++;
      pending.set(id, { resolve: resolve as (result: unknown) => void, reject });
      thread().postMessage({ id, event });
    });

  return {
    invoke: (event) => {
      const result = queue.then(() => run(event));
      queue = result.catch(() => undefined);
      return result;
    },
    stop: async () => {
      stopped = true;
      const running = worker;
      worker = undefined;
      failAll(new Error("job thread stopped"));
      await running?.terminate();
    },
  };
}
