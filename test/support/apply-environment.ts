import { inject } from "vitest";
import { resetAppConfig } from "#shared/config/env";

// Integration test files talk to the emulators started by globalSetup, with the handlers' own settings.
// Files of the `integration` project share their worker's process and modules (vitest.config.ts): a
// file that sets a variable must not hand it to the next, so each file starts from the environment
// the worker started with (kept on globalThis, which outlives the file), plus the stack's.
const worker = globalThis as { fieldOperationsStartEnvironment?: Record<string, string | undefined> };
worker.fieldOperationsStartEnvironment ??= { ...process.env };
const start = worker.fieldOperationsStartEnvironment;
for (const name of Object.keys(process.env)) if (!(name in start)) delete process.env[name];
Object.assign(process.env, start, inject("localEnvironment"));
resetAppConfig();
