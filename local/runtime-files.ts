import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * How operator scripts (`npm run tenant`) reach a running `npm start`: each running instance writes
 * its own runtime file, `.local/runtime/<port>.json` (its base URL, the environment of its
 * emulators and its pid), and removes it when it exits. Two `npm start` from one checkout (on two
 * ports) each keep theirs; a tool finds the one it should use (findRuntimeFile).
 */
export interface RuntimeRecord {
  port: number;
  pid: number;
  baseUrl: string;
  environment: Record<string, string>;
}

export const runtimeDirectory = (stateDirectory: string) => join(stateDirectory, "runtime");

/** Writes this instance's runtime file (owner-only: it names the emulators' endpoints) and removes it on exit. */
export function writeRuntimeFile(stateDirectory: string, record: Omit<RuntimeRecord, "pid">): string {
  const directory = runtimeDirectory(stateDirectory);
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const file = join(directory, `${record.port}.json`);
  writeFileSync(file, JSON.stringify({ ...record, pid: process.pid } satisfies RuntimeRecord), { mode: 0o600 });
  process.once("exit", () => {
    // Only its own: a later instance on the same port (after a crash) may have replaced it.
    try {
      if ((JSON.parse(readFileSync(file, "utf8")) as RuntimeRecord).pid === process.pid) rmSync(file, { force: true });
    } catch {
      // already gone
    }
  });
  return file;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** The runtime files of instances still running (files left by a crashed instance are skipped). */
export function runningRuntimes(stateDirectory: string): Array<RuntimeRecord & { file: string }> {
  let names: string[];
  try {
    names = readdirSync(runtimeDirectory(stateDirectory)).filter((name) => /^\d+\.json$/.test(name));
  } catch {
    return [];
  }
  return names
    .flatMap((name) => {
      const file = join(runtimeDirectory(stateDirectory), name);
      try {
        return [{ ...(JSON.parse(readFileSync(file, "utf8")) as RuntimeRecord), file }];
      } catch {
        return [];
      }
    })
    .filter((record) => alive(record.pid))
    .sort((a, b) => a.port - b.port);
}

/**
 * The runtime a tool should use: the one on `port` when given, else the only one running; an error
 * naming the ports when several run and none was chosen, or when none runs.
 */
export function findRuntime(stateDirectory: string, port?: number): RuntimeRecord {
  const running = runningRuntimes(stateDirectory);
  if (port !== undefined) {
    const match = running.find((record) => record.port === port);
    if (!match)
      throw new Error(
        `no local runtime on port ${port}${running.length ? ` (running: ${running.map((record) => record.port).join(", ")})` : ": start it with `npm start`"}`,
      );
    return match;
  }
  if (running.length === 0) throw new Error("no local runtime: start it first with `npm start`");
  if (running.length > 1)
    throw new Error(`several local runtimes are running (ports ${running.map((record) => record.port).join(", ")}): pass --port <port>`);
  return running[0] as RuntimeRecord;
}
