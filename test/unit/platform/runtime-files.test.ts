import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findRuntime, runtimeDirectory, writeRuntimeFile } from "#local/runtime-files";

/** One runtime file per running `npm start`: two instances from one checkout keep theirs, and tools find the right one. */
const stateDirectory = mkdtempSync(join(tmpdir(), "runtime-files-"));
afterAll(() => rmSync(stateDirectory, { recursive: true, force: true }));

describe("Module: runtime files", () => {
  it("keeps one file per instance, refuses to guess between two, finds one by port, and skips a crashed instance's file", () => {
    writeRuntimeFile(stateDirectory, { port: 3000, baseUrl: "http://127.0.0.1:3000/v3", environment: { TABLE_NAME: "first" } });
    writeRuntimeFile(stateDirectory, { port: 4000, baseUrl: "http://127.0.0.1:4000/v3", environment: { TABLE_NAME: "second" } });
    expect(readdirSync(runtimeDirectory(stateDirectory)).sort()).toEqual(["3000.json", "4000.json"]);

    expect(() => findRuntime(stateDirectory)).toThrow(/several local runtimes are running \(ports 3000, 4000\): pass --port/);
    expect(findRuntime(stateDirectory, 4000).environment).toEqual({ TABLE_NAME: "second" });
    expect(() => findRuntime(stateDirectory, 5000)).toThrow(/no local runtime on port 5000 \(running: 3000, 4000\)/);

    // A file left behind by an instance that no longer runs (a pid no process has) is not a runtime.
    rmSync(join(runtimeDirectory(stateDirectory), "4000.json"));
    writeFileSync(
      join(runtimeDirectory(stateDirectory), "4000.json"),
      JSON.stringify({ port: 4000, pid: 2 ** 22 + 12345, baseUrl: "x", environment: {} }),
    );
    expect(findRuntime(stateDirectory).environment).toEqual({ TABLE_NAME: "first" });
  });

  it("says how to start one when none runs", () => {
    expect(() => findRuntime(mkdtempSync(join(tmpdir(), "runtime-none-")))).toThrow(/no local runtime: start it first with `npm start`/);
  });
});
