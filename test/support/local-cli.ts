import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, inject } from "vitest";
import { repositoryRoot } from "#infra/repository-root";

const run = promisify(execFile);

/**
 * The operator's scripts (`npm run tenant`, …) run as operators run them, in a child process, against
 * the suite's local stack: a scratch folder with a runtime file naming the stack's endpoints
 * (`FIELD_OPS_RUNTIME_FILE`, as `npm start` writes it). Call at the top of a test file: it registers
 * the hooks that make and remove the folder.
 */
export function localCli(prefix: string) {
  let scratch = "";
  let runtimeFile = "";
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), `${prefix}-`));
    runtimeFile = join(scratch, "runtime.json");
    writeFileSync(runtimeFile, JSON.stringify({ environment: inject("localEnvironment") }));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  const cli = (script: string, ...args: string[]) =>
    run(join(repositoryRoot, "node_modules/.bin/tsx"), [script, ...args], {
      cwd: repositoryRoot,
      env: { ...process.env, FIELD_OPS_RUNTIME_FILE: runtimeFile, LOG_LEVEL: "silent" },
    });
  return {
    cli,
    /** `npm run tenant -- <args>` */
    tenantCli: (...args: string[]) => cli("local/tenant-cli.ts", ...args),
    /** The scratch folder, for files a script writes (created before the file's tests run). */
    scratch: () => scratch,
  };
}
