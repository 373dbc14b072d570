import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { repositoryRoot } from "#infra/repository-root";

/** `npm run token` is `tsx local/token-cli.ts`; run the same file without npm's banner. */
const run = promisify(execFile);
const tokenCli = (...args: string[]) =>
  run(join(repositoryRoot, "node_modules", ".bin", "tsx"), [join(repositoryRoot, "local", "token-cli.ts"), ...args], {
    cwd: repositoryRoot,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );

describe("npm run token (local/token-cli.ts)", () => {
  it("--help prints the usage and exits 0", async () => {
    const result = await tokenCli("--help");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^usage: npm run --silent token -- --org/);
    expect(result.stdout).toContain("view/routing-schedule");
    expect(result.stderr).not.toContain("ERR_PARSE_ARGS_UNKNOWN_OPTION");
  }, 30_000);

  it("an unknown option prints the usage, not a stack trace", async () => {
    const result = await tokenCli("--org", "o", "--user", "u", "--frobnicate");
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("usage: npm run --silent token");
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 30_000);

  it("refuses an unknown permission slug and lists the known ones", async () => {
    const result = await tokenCli("--org", "o", "--user", "u", "--permissions", "view/vehicle,bogus/slug");
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("unknown permission bogus/slug");
    expect(result.stderr).toContain("delete/app-integration");
  }, 30_000);

  it("npm's own errors print in this checkout (no project config silences npm)", async () => {
    const result = await run("npm", ["run", "no-such-script"], { cwd: repositoryRoot }).then(
      () => ({ stderr: "" }),
      (error: { stderr: string }) => error,
    );
    expect(result.stderr).toContain("Missing script");
  }, 30_000);

  it("npm run --silent token prints one JWT and nothing else on stdout", async () => {
    const { stdout } = await run("npm", ["run", "--silent", "token", "--", "--org", "o", "--user", "u"], { cwd: repositoryRoot });
    expect(stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
  }, 30_000);
});
