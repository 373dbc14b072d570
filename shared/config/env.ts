import * as z from "zod/mini";

/**
 * Every Lambda (and the local runtime) is configured only through environment variables, parsed
 * once here so a missing or malformed setting fails loudly at the first use instead of deep inside
 * a request.
 */
/**
 * `*` (any origin) or a comma-separated list of origins (`https://app.example.com,https://admin.example.com`).
 * A list entry must be exactly an origin: scheme, host and optional port, no path or trailing slash.
 */
const allowedOriginsSchema = z.pipe(
  z._default(z.string(), "*"),
  z.transform((value: string, context): "*" | string[] => {
    const entries = value
      .split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry.length > 0);
    if (entries.length === 0 || entries.includes("*")) return "*";
    for (const entry of entries) {
      if (!isOrigin(entry)) {
        context.issues.push({ code: "custom", message: `"${entry}" is not an origin (scheme://host[:port], no path)`, input: value });
        return z.NEVER;
      }
    }
    return entries;
  }),
);

function isOrigin(value: string): boolean {
  try {
    return new URL(value).origin === value;
  } catch {
    return false;
  }
}

export const environmentSchema = z.object({
  TABLE_NAME: z._default(z.string().check(z.minLength(1)), "field-operations"),
  BUCKET_NAME: z._default(z.string().check(z.minLength(1)), "field-operations-files"),
  RUN_QUEUE_URL: z._default(z.string(), ""),
  /**
   * Run workers one organization may hold at once (the stack sets the event source's maximum
   * concurrency less one): a run of an organization holding that many is sent back to the queue with
   * a delay, so other organizations' runs always find a worker. Unset: no per-organization share.
   */
  RUN_WORKER_SLOTS_PER_TENANT: z.optional(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(1000))),
  /**
   * Webhook delivery attempts one organization may have running at once (the delivery workers'
   * concurrency × batch size, less one, set by the stack); over it an attempt is sent back with a delay.
   * Unset: no per-organization share.
   */
  WEBHOOK_WORKER_SLOTS_PER_TENANT: z.optional(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(10_000))),
  /** SQS queue of the tick's fan-out pages (empty: the run queue, whose worker reads both kinds). */
  DUE_PAGE_QUEUE_URL: z._default(z.string(), ""),
  RUN_SPILLOVER_QUEUE_URL: z._default(z.string(), ""),
  /** SQS queue of legacy-import steps (docs/api/legacy-import.md). */
  IMPORT_QUEUE_URL: z._default(z.string(), ""),
  JWT_ISSUER: z._default(z.string().check(z.minLength(1)), "field-operations-local"),
  JWT_AUDIENCE: z._default(z.string().check(z.minLength(1)), "field-operations-api"),
  /** HTTPS JWKS endpoint of the identity provider (for Cognito: `https://cognito-idp.<region>.amazonaws.com/<pool>/.well-known/jwks.json`). */
  JWT_JWKS_URI: z._default(z.url(), "https://localhost.invalid/.well-known/jwks.json"),
  /**
   * Optional inline JWKS (JSON) preloaded into the verifier's cache, so the local runtime and tests
   * verify tokens offline. Keys not in it are fetched from JWT_JWKS_URI.
   */
  JWT_JWKS_JSON: z.optional(z.string()),
  /**
   * The accepted issuers as a JSON list (shared/config/jwt-issuers.ts), set by the stack on the
   * authorizer; when set, JWT_ISSUER, JWT_AUDIENCE, JWT_JWKS_URI and JWT_JWKS_JSON are not read.
   */
  JWT_ISSUERS_JSON: z.optional(z.string()),
  /** Longest token lifetime accepted: `exp − iat` (or `exp − now` without `iat`); longer-lived tokens are 401. */
  JWT_MAX_LIFETIME_SECONDS: z._default(z.coerce.number().check(z.int(), z.minimum(60), z.maximum(30 * 24 * 3600)), 24 * 3600),
  APP_TIMEZONE: z._default(z.string().check(z.minLength(1)), "UTC"),
  /** s3rver and LocalStack want path-style bucket addressing. */
  S3_FORCE_PATH_STYLE: z._default(z.enum(["true", "false"]), "false"),
  LOG_LEVEL: z._default(z.enum(["debug", "info", "warn", "error", "silent"]), "info"),
  /** Browser origins allowed to read responses (CORS); `*` answers any origin. */
  CORS_ALLOWED_ORIGINS: allowedOriginsSchema,
  /** Presigned certificate URLs expire after this many seconds. */
  PRESIGN_TTL_SECONDS: z._default(z.coerce.number().check(z.int(), z.minimum(60), z.maximum(3600)), 900),
  /**
   * Runs (scheduled or on demand) one organization may have queued or running at once: more on-demand
   * runs answer 429, more scheduled runs are recorded SKIPPED.
   */
  MAX_ACTIVE_RUNS_PER_ORG: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(1000)), 5),
  /**
   * Most search threads per routing run (the run worker uses min(this, available cores); 1: the
   * single-thread search). Unset: every available core (shared/routing-threads).
   */
  ROUTING_THREADS: z.optional(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(64))),
  /**
   * Where GET /usage finds API calls: `local-gateway` (the local gateway's counters in the table; the
   * local runtime sets it) or `usage-plan` (on AWS the usage plan counts them and GET /usage answers
   * `calls: null`; `npm run usage -- --aws` reads them).
   */
  USAGE_CALLS_SOURCE: z._default(z.enum(["local-gateway", "usage-plan"]), "usage-plan"),
  /** Set by Lambda: the function's memory, metered with each run (the local runtime meters its resident memory). */
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: z.optional(z.coerce.number().check(z.int(), z.positive())),
  /**
   * Test-only escape hatch: lets external-API data types call loopback servers started by tests.
   * Never set in a deployed stack.
   */
  ALLOW_LOOPBACK_PROVIDERS: z._default(z.enum(["true", "false"]), "false"),
  /** SQS queue of webhook delivery attempts and its dead-letter queue (exhausted deliveries). */
  WEBHOOK_QUEUE_URL: z._default(z.string(), ""),
  WEBHOOK_DEAD_LETTER_QUEUE_URL: z._default(z.string(), ""),
  /**
   * Seconds before each retry of a failed delivery, comma-separated (attempt 2, 3, …). Default:
   * 5,300,1800,7200,18000,36000,36000 (8 attempts over about 27.6 hours).
   */
  WEBHOOK_RETRY_SCHEDULE_SECONDS: z.optional(z.string()),
  /**
   * Local only: lets webhooks point at loopback receivers (http:// or https://) started on this
   * machine. Never set in a deployed stack (webhooks are https:// to public addresses there).
   */
  WEBHOOKS_ALLOW_LOOPBACK: z._default(z.enum(["true", "false"]), "false"),
  /**
   * Base64 of the 32-byte key that seals webhook signing secrets in the table (AES-256-GCM). `npm
   * start` keeps one under .local/ (a fresh one per process with --in-memory).
   */
  /** The stack's KMS key that encrypts webhook signing secrets (set by the stack; locally unset). */
  WEBHOOK_KMS_KEY_ID: z.optional(z.string().check(z.minLength(1))),
  WEBHOOK_SEALING_KEY: z.optional(z.string().check(z.regex(/^[A-Za-z0-9+/]{43}=$/, "must be the base64 of 32 bytes"))),
  /**
   * Let an organization with no tenant record call the API on the default plan (the local runtime
   * turns it on; the stack sets it from context `tenantAutoEnroll`, off by default).
   */
  TENANT_AUTO_ENROLL: z._default(z.enum(["true", "false"]), "false"),
  /** The usage-plan key auto-enrolled organizations share (the stack creates it on the default plan). */
  TENANT_AUTO_ENROLL_API_KEY: z._default(z.string().check(z.minLength(1)), "auto-enrolled"),
  /**
   * Longest one DynamoDB call retries contention (transaction conflicts, throttles) before the
   * request is answered 503; never more than the invocation's remaining time allows
   * (shared/store/retry-budget.ts).
   */
  DYNAMODB_RETRY_BUDGET_MS: z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(60_000)), 8_000),
  /**
   * Parent lease (docs/architecture.md, "Writes without shared items"): how long after its confirming
   * read a child's transaction may still start. A parent's rare writer (data type change or delete,
   * hub delete) waits this plus half of it (at least 500 ms) after its fence. Production DynamoDB
   * answers reads in milliseconds; a loaded emulator may take seconds, so the test stack sets more.
   */
  DYNAMODB_PARENT_LEASE_MS: z._default(z.coerce.number().check(z.int(), z.minimum(100), z.maximum(30_000)), 1_000),
  /**
   * A request answered after this many milliseconds logs one `slow request` line (WARN) with its
   * context; quicker successes log nothing (the API Gateway access log has every request's status and latency).
   */
  SLOW_REQUEST_MS: z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(60_000)), 1_000),
});

export type AppConfig = z.infer<typeof environmentSchema>;

let cached: AppConfig | undefined;

export function appConfig(): AppConfig {
  cached ??= environmentSchema.parse(process.env);
  return cached;
}

/** Tests and the local runtime change the environment after import; they call this afterwards. */
export function resetAppConfig(): void {
  cached = undefined;
}
