import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";
import LongestFirstSequencer from "./test/support/longest-first-sequencer.ts";

// The local stack (DynamoDB Local, gateway, handlers) runs in this process, started by globalSetup:
// set its log level before any handler module loads. Errors print (a 500's cause with its stack, a
// job's failure), nothing below them; LOG_LEVEL=silent quiets them too, LOG_LEVEL=info shows every
// line. Test files get `env` below (silent unless LOG_LEVEL is set), not this process's level.
const requestedLogLevel = process.env.LOG_LEVEL;
process.env.LOG_LEVEL ??= "error";
await import("./local/process-defaults.ts");

// Three kinds of test: `unit` is pure logic with no network; `integration` (integration/, http/,
// infra/) shares one set of emulators (DynamoDB Local, s3rver, local SQS) started once by globalSetup;
// `strict` runs its files on the same emulators under production DynamoDB semantics (transaction
// conflicts, throttling, index lag: test/support/strict-dynamodb.ts). A file opts in by being named
// `*.strict.test.ts` or by being listed in `strictFiles`.
const strictFiles = [
  "test/integration/runs/scheduler-tick.test.ts",
  "test/http/legacy-import.test.ts",
  "test/http/profile-delete-race.test.ts",
];
const strictPatterns = [...strictFiles, "test/**/*.strict.test.ts"];
const integrationDirectories = ["test/integration", "test/http", "test/infra"];
const integrationPatterns = integrationDirectories.map((directory) => `${directory}/**/*.test.ts`);
// Unit and integration files share their worker's modules (`isolate: false`): the route table, the
// SDK, the CDK library and the domain load once per worker instead of once per file (unit files:
// 41 s and 73 CPU-s against 103 s and 152; 20 HTTP files: 120 CPU-s against 155). A file that changes
// what modules hold or read runs in a fresh module graph of its own, in the `-isolated` project of
// its kind: one that starts a stack or gateway in its worker (whose handlers read that stack's
// environment as they load), sets the logger's level, mocks modules or globals, sets environment
// variables, or imports modules mid-test. Found by what the file itself does, so a new file of that
// kind is isolated without a list to keep. Strict files each run behind their own DynamoDB proxy and
// gateway (test/support/strict-dynamodb.ts): always isolated.
const changesModuleState =
  /\b(ownStackWithReceiver|startLocalStack|startGateway|setLogLevel)\b|\bvi\.(hoisted|mock|doMock|stubEnv|stubGlobal)\b|process\.env\.\w+\s*=(?!=)|delete process\.env|await import\(/;
const isolatedFiles = ["test/unit", ...integrationDirectories]
  .flatMap((directory) => (readdirSync(directory, { recursive: true }) as string[]).map((name) => `${directory}/${name}`))
  .filter((file) => file.endsWith(".test.ts") && !strictFiles.includes(file) && !file.endsWith(".strict.test.ts"))
  .filter((file) => changesModuleState.test(readFileSync(file, "utf8")));
const isolatedUnitFiles = isolatedFiles.filter((file) => file.startsWith("test/unit/"));
const isolatedIntegrationFiles = isolatedFiles.filter((file) => !file.startsWith("test/unit/"));
// Workers: most integration and HTTP files wait (on DynamoDB Local, the gateway, fence waits, a
// scheduler minute), so twice the cores run more of them at once than Vitest's default (cores - 1,
// one worker on 2 cores): the integration, integration-isolated and strict projects share one pool
// of that size, longest files first, so no long file starts last (test/support/longest-first-sequencer.ts). The unit
// files are CPU-bound with 5 s timeouts: they run first, on one worker per core (4 on 2 cores timed
// out 13 of them on a loaded machine). VITEST_MAX_WORKERS sets the shared pool's size.
const cores = availableParallelism();
const maxWorkers = Number(process.env.VITEST_MAX_WORKERS ?? Math.max(4, cores * 2));
export default defineConfig({
  test: {
    // Handlers called directly by test files stay quiet unless asked for (the Powertools logger reads its level once, at load).
    env: { LOG_LEVEL: requestedLogLevel ?? "silent" },
    reporters: ["default", "./test/support/summary-reporter.ts"],
    maxWorkers,
    sequence: { sequencer: LongestFirstSequencer },
    // Watch mode: HTTP tests reach the handlers through the local gateway, not through imports, so
    // Vitest cannot see that an edited store or handler is theirs: any source change reruns the
    // watched files (the gateway then imports the edited modules: test/support/global-setup.ts).
    forceRerunTriggers: [...configDefaults.forceRerunTriggers, "**/functions/**", "**/shared/**", "**/local/**"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          exclude: isolatedUnitFiles,
          isolate: false,
          maxWorkers: cores,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: "unit-isolated", include: isolatedUnitFiles, maxWorkers: cores, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: "integration",
          sequence: { groupOrder: 1 },
          include: integrationPatterns,
          exclude: [...strictPatterns, ...isolatedIntegrationFiles],
          isolate: false,
          globalSetup: ["test/support/global-setup.ts"],
          setupFiles: ["test/support/apply-environment.ts"],
          // A hang guard, not a speed check: four files share two cores, so a test that runs the
          // solver several times (a live day, its re-plan, another) can pass 60 s on a loaded machine.
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: "integration-isolated",
          sequence: { groupOrder: 1 },
          include: isolatedIntegrationFiles,
          globalSetup: ["test/support/global-setup.ts"],
          setupFiles: ["test/support/apply-environment.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: "strict",
          sequence: { groupOrder: 1 },
          include: strictPatterns,
          globalSetup: ["test/support/global-setup.ts"],
          setupFiles: ["test/support/apply-environment.ts", "test/support/strict-dynamodb.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
