import { defineConfig } from "vitest/config";

// The local stack (DynamoDB Local, gateway, handlers) runs in this process, started by globalSetup:
// quiet it before any handler module loads (test files get `env` below; this process does not).
process.env.LOG_LEVEL ??= "silent";
await import("./local/process-defaults.ts");

// Three projects: `unit` is pure logic with no network; `integration` (integration/, http/, infra/)
// shares one set of emulators (DynamoDB Local, s3rver, local SQS) started once by globalSetup;
// `strict` runs its files on the same emulators under production DynamoDB semantics (transaction
// conflicts, throttling, index lag: test/support/strict-dynamodb.ts). A file opts in by being named
// `*.strict.test.ts` or by being listed in `strictFiles`.
const strictFiles = [
  "test/integration/runs/scheduler-tick.test.ts",
  "test/http/legacy-import.test.ts",
  "test/http/profile-delete-race.test.ts",
];
const strictPatterns = [...strictFiles, "test/**/*.strict.test.ts"];
export default defineConfig({
  test: {
    // Handlers' logs stay quiet in tests unless asked for (the Powertools logger reads its level once, at load).
    env: { LOG_LEVEL: process.env.LOG_LEVEL ?? "silent" },
    reporters: ["default", "./test/support/summary-reporter.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts", "test/http/**/*.test.ts", "test/infra/**/*.test.ts", "test/bench/**/*.test.ts"],
          exclude: strictPatterns,
          globalSetup: ["test/support/global-setup.ts"],
          setupFiles: ["test/support/apply-environment.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: "strict",
          include: strictPatterns,
          globalSetup: ["test/support/global-setup.ts"],
          setupFiles: ["test/support/apply-environment.ts", "test/support/strict-dynamodb.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
