import { join } from "node:path";
import { parseArgs } from "node:util";
import { repositoryRoot, startLocalStack } from "#local/stack";
import { loadOrCreateSigningKey } from "#local/tokens";

/**
 * `npm start [-- --in-memory]`: the whole API on http://127.0.0.1:${PORT:-3000}/v3 with no AWS
 * account. State persists under .local/ unless --in-memory.
 */
const { values } = parseArgs({ options: { "in-memory": { type: "boolean", default: false } }, allowPositionals: false });
const stateDirectory = join(repositoryRoot, ".local");
const port = Number(process.env.PORT ?? 3000);

const stack = await startLocalStack({
  port,
  inMemory: values["in-memory"] ?? false,
  stateDirectory,
  signingKey: loadOrCreateSigningKey(join(stateDirectory, "jwt")),
  runScheduler: true,
});

process.stdout.write(
  [
    "",
    `Field Operations API running at ${stack.baseUrl}  (${values["in-memory"] ? "in memory" : `state in ${stateDirectory}`})`,
    `OpenAPI document:  ${stack.baseUrl}/openapi.json`,
    "Mint a token:      npm run --silent token -- --org my-org --user me [--hubs h1,h2] [--permissions all|slug,slug] [--hide <dataTypeId>:<field>,<field>]",
    `Try it:            curl -H "Authorization: Bearer $(npm run --silent token -- --org my-org --user me)" ${stack.baseUrl}/vehicles`,
    "Scheduler tick:    every minute boundary. Press Ctrl+C to stop.",
    "",
  ].join("\n"),
);

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  await stack.stop();
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
