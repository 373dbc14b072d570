import { inject } from "vitest";
import { resetAppConfig } from "#shared/config/env";

// Integration test files talk to the emulators started by globalSetup, with the handlers' own settings.
Object.assign(process.env, inject("localEnvironment"));
resetAppConfig();
