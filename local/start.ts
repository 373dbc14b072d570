import { checkStartEnvironment } from "#shared/config/deploy-config";
import { environmentSchema } from "#shared/config/env";
import "#local/process-defaults";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { writeRuntimeFile } from "#local/runtime-files";
import { repositoryRoot, startLocalStack } from "#local/stack";
import { type DynamoDbSemanticsOptions, strictSemanticsOptions } from "#local/dynamodb-semantics";
import { loadOrCreateSigningKey } from "#local/tokens";

/**
 * `npm start [-- --in-memory]`: the whole API on http://127.0.0.1:<PORT>/v3 (PORT defaults to 3000)
 * with no AWS account. State persists under .local/ unless --in-memory.
 */
const usage = [
  "usage: npm start [-- --in-memory] [-- --endpoints <url> | --dynamodb-endpoint <url> --s3-endpoint <url> --sqs-endpoint <url>] [-- --dynamodb-semantics local|strict [strict options]] [-- --help]",
  "",
  "  Runs the whole API locally on http://127.0.0.1:<PORT>/v3 (DynamoDB Local, an S3 emulator,",
  "  a local queue, the local API gateway and the scheduler tick).",
  "",
  "  --in-memory   keep no state (otherwise table and files persist under .local/)",
  "  --endpoints <url>           use services already running there (e.g. LocalStack, http://localhost:4566)",
  "                              instead of the embedded emulators; the table, bucket and queues are created if missing",
  "  --dynamodb-endpoint <url>   only DynamoDB from there (e.g. DynamoDB Local on http://localhost:8000)",
  "  --s3-endpoint <url>         only S3 from there (path-style; credentials S3RVER/S3RVER unless set)",
  "  --sqs-endpoint <url>        only SQS from there",
  "  --dynamodb-semantics local|strict",
  "                local (default): DynamoDB Local as it is. strict: production DynamoDB behaviour in",
  '                front of it (docs/architecture.md, "DynamoDB semantics the tests model"): concurrent',
  "                transactions naming one item conflict (TransactionCanceledException /",
  "                TransactionConflictException), plus the options below",
  "    --dynamodb-transaction-hold-ms N   a transaction keeps its items N ms after it committed (default 10)",
  "    --dynamodb-throttle-rate R         throttle this share of calls, 0-1 (default 0)",
  "    --dynamodb-index-lag-ms N          writes reach the global secondary indexes N ms late (default 0)",
  "  --tick-on-stdin   each line read on standard input ticks the scheduler now, for the minute it",
  "                names (an ISO time, e.g. 2026-01-05T07:00:00Z) or else the next minute boundary, as if",
  "                the clock had reached it (tests use it instead of waiting for a real minute)",
  "  -h, --help    print this help",
  "",
  "  environment:  PORT (default 3000), APP_TIMEZONE, CORS_ALLOWED_ORIGINS, LOG_LEVEL",
  "",
].join("\n");

let values: {
  "in-memory"?: boolean;
  help?: boolean;
  endpoints?: string;
  "dynamodb-endpoint"?: string;
  "s3-endpoint"?: string;
  "sqs-endpoint"?: string;
  "dynamodb-semantics"?: string;
  "dynamodb-transaction-hold-ms"?: string;
  "dynamodb-throttle-rate"?: string;
  "dynamodb-index-lag-ms"?: string;
  "tick-on-stdin"?: boolean;
};
try {
  ({ values } = parseArgs({
    options: {
      "in-memory": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
      endpoints: { type: "string" },
      "dynamodb-endpoint": { type: "string" },
      "s3-endpoint": { type: "string" },
      "sqs-endpoint": { type: "string" },
      "dynamodb-semantics": { type: "string", default: "local" },
      "dynamodb-transaction-hold-ms": { type: "string" },
      "dynamodb-throttle-rate": { type: "string" },
      "dynamodb-index-lag-ms": { type: "string" },
      "tick-on-stdin": { type: "boolean", default: false },
    },
    allowPositionals: false,
  }));
} catch (error) {
  process.stderr.write(`npm start: ${(error as Error).message}\n\n${usage}`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write(usage);
  process.exit(0);
}

const endpoints = {
  dynamodb: values["dynamodb-endpoint"] ?? values.endpoints,
  s3: values["s3-endpoint"] ?? values.endpoints,
  sqs: values["sqs-endpoint"] ?? values.endpoints,
};
for (const [service, url] of Object.entries(endpoints)) {
  if (url !== undefined && !/^https?:\/\/[^/\s]+\/?$/.test(url)) {
    process.stderr.write(`npm start: the ${service} endpoint must be http(s)://host[:port], not "${url}".\n`);
    process.exit(2);
  }
}
/** The semantics options the flags ask for; exits with the usage on a bad value. */
function dynamodbSemantics(): Partial<DynamoDbSemanticsOptions> | undefined {
  const refuse = (message: string): never => {
    process.stderr.write(`npm start: ${message}\n\n${usage}`);
    process.exit(2);
  };
  const mode = values["dynamodb-semantics"];
  const tuning = ["dynamodb-transaction-hold-ms", "dynamodb-throttle-rate", "dynamodb-index-lag-ms"] as const;
  if (mode !== "local" && mode !== "strict") refuse(`--dynamodb-semantics is local or strict, not "${mode}"`);
  if (mode === "local") {
    const stray = tuning.find((name) => values[name] !== undefined);
    if (stray) refuse(`--${stray} needs --dynamodb-semantics strict`);
    return undefined;
  }
  const number = (name: (typeof tuning)[number], max: number): number | undefined => {
    const text = values[name];
    if (text === undefined) return undefined;
    const value = Number(text);
    if (text.trim() === "" || !Number.isFinite(value) || value < 0 || value > max)
      refuse(`--${name} must be a number from 0 to ${max}, not "${text}"`);
    return value;
  };
  const hold = number("dynamodb-transaction-hold-ms", 60_000);
  const rate = number("dynamodb-throttle-rate", 1);
  const lag = number("dynamodb-index-lag-ms", 600_000);
  return {
    ...strictSemanticsOptions,
    ...(hold !== undefined ? { transactionHoldMs: hold } : {}),
    ...(rate !== undefined ? { throttleRate: rate, seed: Date.now() } : {}),
    ...(lag !== undefined ? { indexLag: lag } : {}),
  };
}
const semantics = dynamodbSemantics();

const port = Number(process.env.PORT ?? 3000);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write(`npm start: PORT must be a port number (0–65535), not "${process.env.PORT}".\n`);
  process.exit(2);
}
// The environment the handlers will read, checked before anything starts (shared/config/deploy-config.ts).
try {
  checkStartEnvironment(process.env, environmentSchema);
} catch (error) {
  process.stderr.write(`npm start: ${(error as Error).message}\n`);
  process.exit(2);
}
const stateDirectory = join(repositoryRoot, ".local");

// Stopped while starting: exit through process.exit, whose 'exit' listeners stop the emulators already started.
const abortStart = () => process.exit(130);
process.once("SIGINT", abortStart);
process.once("SIGTERM", abortStart);

let stack: Awaited<ReturnType<typeof startLocalStack>>;
try {
  stack = await startLocalStack({
    port,
    inMemory: values["in-memory"] ?? false,
    stateDirectory,
    signingKey: loadOrCreateSigningKey(join(stateDirectory, "jwt")),
    runScheduler: true,
    endpoints: Object.fromEntries(
      Object.entries(endpoints)
        .filter(([, url]) => url !== undefined)
        .map(([service, url]) => [service, (url as string).replace(/\/$/, "")]),
    ),
    dynamodbSemantics: semantics,
  });
} catch (error) {
  // startLocalStack has already stopped every emulator it started: one line, no stack trace.
  process.stderr.write(`npm start: could not start: ${(error as Error).message.split("\n")[0]}\n`);
  process.exit(1);
}

// How `npm run tenant` (and other operator scripts) reach this runtime's store: one file per running instance, removed on exit.
writeRuntimeFile(stateDirectory, { port: Number(new URL(stack.baseUrl).port), baseUrl: stack.baseUrl, environment: stack.environment });

process.stdout.write(
  [
    "",
    `Field Operations API running at ${stack.baseUrl}  (${values["in-memory"] ? "in memory" : `state in ${stateDirectory}`})`,
    `API docs page:     ${stack.baseUrl}/docs  (OpenAPI document: ${stack.baseUrl}/openapi.json; no token needed)`,
    `DynamoDB:          ${semantics ? `strict semantics (conflicts; hold ${semantics.transactionHoldMs} ms, throttle rate ${semantics.throttleRate ?? 0}, index lag ${semantics.indexLag ?? 0} ms)` : "DynamoDB Local as it is (--dynamodb-semantics strict models production)"}`,
    "Mint a token:      npm run --silent token -- --org my-org --user me [--hubs h1,h2] [--permissions all|slug,slug] [--hide <dataTypeId>:<field>,<field>]",
    `Try it:            curl -H "Authorization: Bearer $(npm run --silent token -- --org my-org --user me)" ${stack.baseUrl}/vehicles`,
    "Tenants:           unknown organizations are enrolled on the default plan at their first call; npm run tenant -- --help",
    ...(stack.environment.WEBHOOKS_ALLOW_LOOPBACK === "true"
      ? ["Webhooks:          WEBHOOKS_ALLOW_LOOPBACK=true: receivers on this machine (http://127.0.0.1, localhost) are admitted"]
      : []),
    `Scheduler tick:    every minute boundary${values["tick-on-stdin"] ? ", and for each line on standard input" : ""}. Press Ctrl+C to stop.`,
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
process.off("SIGINT", abortStart);
process.off("SIGTERM", abortStart);
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);

// On demand, the tick EventBridge would send at a minute the clock has not reached yet: the tick
// reads "now" from its event, so the slot is claimed, enqueued and run as at that minute.
if (values["tick-on-stdin"]) {
  const { createInterface } = await import("node:readline");
  const lines = createInterface({ input: process.stdin });
  lines.on("line", async (line) => {
    const asked = line.trim();
    const at = asked ? new Date(asked) : new Date(Math.ceil((Date.now() + 1) / 60_000) * 60_000);
    if (Number.isNaN(at.getTime())) {
      process.stderr.write(`npm start: --tick-on-stdin reads an ISO time or an empty line, not "${asked}"\n`);
      return;
    }
    try {
      await stack.tick(at);
      process.stdout.write(`Scheduler tick:    ticked for ${at.toISOString()}\n`);
    } catch (error) {
      process.stderr.write(`local scheduler: ${String(error)}\n`);
    }
  });
}
