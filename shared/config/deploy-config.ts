import * as z from "zod/mini";
import { parseTravelProviders } from "#shared/domain/travel/providers";

/**
 * One schema for every CDK context flag (`-c key=value`, cdk.json) and for the environment `npm start`
 * reads: parsed at synth (infra/app.ts) and at `npm start` (local/start.ts), so a bad value fails
 * there with a message naming the flag, never as a function that throws at its first request or a
 * limit silently dropped. Context values arrive as strings from the CLI, as JSON values from cdk.json.
 */

/** An IANA time zone the runtime knows (luxon and Intl share the ICU data). */
export function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const text = z.pipe(
  z.union([z.string(), z.number(), z.boolean()]),
  z.transform((value) => String(value)),
);
const flag = z.pipe(
  text,
  z.transform((value, context) => {
    if (value === "true") return true;
    if (value === "false") return false;
    context.issues.push({ code: "custom", message: `must be true or false, got "${value}"`, input: value });
    return z.NEVER;
  }),
);
const integer = (min: number, max: number) =>
  z.pipe(
    text,
    z.transform((value, context) => {
      const number = Number(value);
      if (value.trim() === "" || !Number.isInteger(number) || number < min || number > max) {
        context.issues.push({ code: "custom", message: `must be a whole number from ${min} to ${max}, got "${value}"`, input: value });
        return z.NEVER;
      }
      return number;
    }),
  );
const timeZone = z.pipe(
  text,
  z.transform((value, context) => {
    if (!isTimeZone(value)) {
      context.issues.push({ code: "custom", message: `must be an IANA time zone (e.g. Europe/Berlin), got "${value}"`, input: value });
      return z.NEVER;
    }
    return value;
  }),
);
const httpsUrl = z.pipe(
  text,
  z.transform((value, context) => {
    try {
      if (new URL(value).protocol === "https:") return value;
    } catch {}
    context.issues.push({ code: "custom", message: `must be an https:// URL, got "${value}"`, input: value });
    return z.NEVER;
  }),
);

/**
 * The retention periods CloudWatch Logs accepts (PutRetentionPolicy's `retentionInDays`; the CDK's
 * `RetentionDays` enum, which test/unit/platform/deploy-config.test.ts compares this list with).
 */
export const logRetentionPeriods = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;
const retentionPeriod = z.pipe(
  text,
  z.transform((value, context) => {
    const days = Number(value);
    if ((logRetentionPeriods as readonly number[]).includes(days)) return days;
    context.issues.push({
      code: "custom",
      message: `must be a CloudWatch Logs retention period (${logRetentionPeriods.join(", ")}), got "${value}"`,
      input: value,
    });
    return z.NEVER;
  }),
);
const fraction = z.pipe(
  text,
  z.transform((value, context) => {
    const number = Number(value);
    if (value.trim() !== "" && number >= 0 && number <= 1) return number;
    context.issues.push({ code: "custom", message: `must be a number from 0 to 1, got "${value}"`, input: value });
    return z.NEVER;
  }),
);

/** Every context flag the app reads (infra/app.ts, the stack), each optional: defaults stay where they are used. */
export const contextSchema = z.object({
  stackName: z.optional(z.pipe(text, z.string().check(z.regex(/^[A-Za-z][A-Za-z0-9-]{0,127}$/, "must be a CloudFormation stack name")))),
  jwtIssuer: z.optional(z.pipe(text, z.string().check(z.minLength(1)))),
  jwtAudience: z.optional(z.pipe(text, z.string().check(z.minLength(1)))),
  jwtJwksUri: z.optional(httpsUrl),
  /** A JSON list of issuers (shared/config/jwt-issuers.ts); when set, jwtIssuer/jwtAudience/jwtJwksUri are not read. */
  jwtIssuersFile: z.optional(text),
  appTimeZone: z.optional(timeZone),
  corsAllowedOrigins: z.optional(text),
  sourceMaps: z.optional(flag),
  alarmEmail: z.optional(z.pipe(text, z.email())),
  /** A regional WAF web ACL to associate with the stage (`arn:aws:wafv2:<region>:<account>:regional/webacl/<name>/<id>`). */
  webAclArn: z.optional(
    z.pipe(
      text,
      z
        .string()
        .check(
          z.regex(/^arn:aws[a-z-]*:wafv2:[a-z0-9-]+:\d{12}:regional\/webacl\/[^/]+\/[^/]+$/, "must be the ARN of a regional WAF web ACL"),
        ),
    ),
  ),
  tenantPlansFile: z.optional(text),
  tenantAutoEnroll: z.optional(flag),
  authorizerCacheTtlSeconds: z.optional(integer(0, 3600)),
  apiGatewayAccountRole: z.optional(flag),
  apiGatewayExecutionLogs: z.optional(flag),
  logLevel: z.optional(z.pipe(text, z.enum(["DEBUG", "INFO", "WARN", "ERROR", "debug", "info", "warn", "error"]))),
  travelProviders: z.optional(text),
  runWorkerMaxConcurrency: z.optional(integer(2, 1000)),
  runWorkerMemoryMb: z.optional(integer(128, 10_240)),
  maxActiveRunsPerOrg: z.optional(integer(1, 1000)),
  routingThreads: z.optional(integer(1, 64)),
  resultRetentionDays: z.optional(integer(1, 36_500)),
  noncurrentVersionDays: z.optional(integer(1, 36_500)),
  importRetentionDays: z.optional(integer(1, 36_500)),
  logRetentionDays: z.optional(retentionPeriod),
  accessLogRetentionDays: z.optional(retentionPeriod),
  logGroupClass: z.optional(
    z.pipe(
      text,
      z.pipe(
        z.transform((value: string) => value.toUpperCase()),
        z.enum(["STANDARD", "INFREQUENT_ACCESS"]),
      ),
    ),
  ),
  xraySamplingReservoir: z.optional(integer(0, 1_000_000)),
  xraySamplingRate: z.optional(fraction),
  proofRetentionDays: z.optional(integer(1, 36_500)),
});
export type DeployContext = z.infer<typeof contextSchema>;

/** Turns zod issues into one line per flag: `runWorkerMaxConcurrency: must be a whole number …`. */
function describeIssues(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues.map((issue) => `  ${issue.path.map(String).join(".") || "(value)"}: ${issue.message}`).join("\n");
}

/** Parses the context flags of `keys`' values; throws naming each bad flag. */
export function parseDeployContext(read: (key: string) => unknown): DeployContext {
  const raw = Object.fromEntries(
    Object.keys(contextSchema.shape).flatMap((key) => {
      const value = read(key);
      return value === undefined || value === null ? [] : [[key, value]];
    }),
  );
  const parsed = contextSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`Invalid CDK context (-c key=value or cdk.json):\n${describeIssues(parsed.error.issues)}`);
  return parsed.data;
}

/**
 * The environment `npm start` serves with: the functions' schema (shared/config/env.ts) plus what it
 * does not parse itself (APP_TIMEZONE a real zone; TRAVEL_PROVIDERS_JSON a valid providers document).
 * Throws naming each bad variable.
 */
export function checkStartEnvironment(environment: Record<string, string | undefined>, schema: z.ZodMiniType): void {
  const problems: string[] = [];
  const parsed = schema.safeParse(environment);
  if (!parsed.success) problems.push(describeIssues(parsed.error.issues));
  if (environment.APP_TIMEZONE !== undefined && !isTimeZone(environment.APP_TIMEZONE))
    problems.push(`  APP_TIMEZONE: must be an IANA time zone (e.g. Europe/Berlin), got "${environment.APP_TIMEZONE}"`);
  if (environment.TRAVEL_PROVIDERS_JSON) {
    try {
      parseTravelProviders(JSON.parse(environment.TRAVEL_PROVIDERS_JSON));
    } catch (error) {
      const issues = (error as { issues?: Array<{ path: PropertyKey[]; message: string; expected?: string }> }).issues;
      const detail = issues
        ? issues
            .map(
              (issue) =>
                `${issue.path.map(String).join(".") || "(document)"} ${issue.message}${issue.expected ? ` (expected ${issue.expected})` : ""}`,
            )
            .join("; ")
        : (error as Error).message;
      problems.push(`  TRAVEL_PROVIDERS_JSON: not a travel providers document (docs/operations.md, "Road-network travel"): ${detail}`);
    }
  }
  if (problems.length > 0) throw new Error(`Invalid environment:\n${problems.join("\n")}`);
}
