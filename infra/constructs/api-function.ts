import { Duration, type Stack, Validations } from "aws-cdk-lib";
import {
  ApplicationLogLevel,
  Architecture,
  Code,
  Function as LambdaFunction,
  type FunctionProps,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
  Tracing,
} from "aws-cdk-lib/aws-lambda";
import { type IRole, PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { type ILogGroup, LogGroup } from "aws-cdk-lib/aws-logs";
import { productLogGroupProps } from "#infra/constructs/observability-costs";
import type { Construct } from "constructs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleEntries } from "#infra/bundling";

/**
 * The code of every function, bundled once per synth: all entries in one esbuild run
 * (infra/bundling.ts), each staged as its own asset. When the stacks are synthesized without
 * bundling (`aws:cdk:bundling-stacks` empty, as the CDK tests do) every function gets a stub.
 */
export class FunctionCode {
  private readonly directories: Map<string, string> | undefined;
  private readonly outdir: string | undefined;

  constructor(
    stack: Stack,
    entries: readonly string[],
    private readonly options: { repositoryRoot: string; sourceMaps: boolean; planOverrides?: unknown },
  ) {
    if (!stack.bundlingRequired) return;
    const outdir = mkdtempSync(join(tmpdir(), "field-operations-bundles-"));
    this.outdir = outdir;
    process.once("exit", () => this.dispose());
    this.directories = bundleEntries(entries, { ...options, outdir });
  }

  /** Assets are copied into the cloud assembly as each function is built; afterwards the bundles can go. */
  dispose(): void {
    if (this.outdir) rmSync(this.outdir, { recursive: true, force: true });
  }

  get sourceMaps(): boolean {
    return this.options.sourceMaps;
  }

  for(entry: string): Code {
    if (!this.directories) return Code.fromInline(`exports.handler = async () => { throw new Error("not bundled: ${entry}"); };`);
    const directory = this.directories.get(entry);
    if (!directory) throw new Error(`${entry} was not bundled: pass it to FunctionCode`);
    return Code.fromAsset(directory);
  }
}

/**
 * The defaults every function of this product shares, fixed once: Node.js 24 on ARM64, code from
 * the shared bundles (FunctionCode), X-Ray active tracing, a log group with a retention period (its own unless one
 * is given), and a role (its own unless one is given) that may write only to that log group.
 */
export interface ProductFunctionProps extends Omit<FunctionProps, "code" | "handler" | "runtime" | "architecture" | "logGroup"> {
  /** The log group to write to (the API areas share one each); the role may write only there. */
  logGroup?: ILogGroup;
  /** Handler module relative to the repository root (the route table's `handler`). */
  entry: string;
  code: FunctionCode;
}

export class ProductFunction extends LambdaFunction {
  constructor(scope: Construct, id: string, props: ProductFunctionProps) {
    const { code, entry, environment, ...rest } = props;
    // API functions share their area's log group (passed in); the jobs get one each.
    const logGroup = props.logGroup ?? new LogGroup(scope, `${id}Logs`, productLogGroupProps(scope, "metrics"));
    // Not Lambda's default role: it carries AWSLambdaBasicExecutionRole, whose log actions reach every log group.
    let role = props.role;
    if (!role) {
      const own = new Role(scope, `${id}Role`, { assumedBy: new ServicePrincipal("lambda.amazonaws.com"), description: `Runs ${id}` });
      writeLogsOnlyTo(own, logGroup);
      role = own;
    }
    super(scope, id, {
      role,
      code: code.for(entry),
      handler: "index.handler",
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.seconds(29),
      logGroup,
      // Active tracing, like the API stage (tracingEnabled): one trace from the gateway through the function.
      tracing: Tracing.ACTIVE,
      // JSON log lines (Powertools writes JSON; Lambda's own lines too), filtered by level (context logLevel).
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: applicationLogLevel(scope.node.tryGetContext("logLevel")),
      systemLogLevelV2: SystemLogLevel.WARN,
      environment: { ...(code.sourceMaps ? { NODE_OPTIONS: "--enable-source-maps" } : {}), ...environment },
      ...rest,
    });
    const reason =
      "X-Ray's PutTraceSegments/PutTelemetryRecords (active tracing) have no resource-level permissions; no other action of this role is on every resource (test/infra/least-privilege.test.ts).";
    Validations.of(role).acknowledge({ id: "AwsSolutions::AwsSolutions-IAM5[Resource::*]", reason });
    Validations.of(this).acknowledge({
      id: "Serverless-LambdaDLQ",
      reason:
        "No function is invoked asynchronously with work to lose: API functions answer synchronously, the SQS workers' failed messages go to their queues' dead-letter queues, and a failed scheduler tick is redone by the next minute's (schedules stay due; TickFailed/TickMissing alarm).",
    });
  }
}

/** A function role's log permissions: its own log group's streams, nothing else (the API areas' shared roles too). */
export function writeLogsOnlyTo(role: IRole, logGroup: ILogGroup): void {
  role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ["logs:CreateLogStream", "logs:PutLogEvents"], resources: [logGroup.logGroupArn] }),
  );
}

/** Context `logLevel` (DEBUG, INFO, WARN or ERROR; default INFO): the lines Lambda keeps, Powertools' level too (AWS_LAMBDA_LOG_LEVEL). */
export function applicationLogLevel(context: unknown): ApplicationLogLevel {
  const level = String(context ?? "INFO").toUpperCase();
  const levels: Record<string, ApplicationLogLevel> = {
    DEBUG: ApplicationLogLevel.DEBUG,
    INFO: ApplicationLogLevel.INFO,
    WARN: ApplicationLogLevel.WARN,
    ERROR: ApplicationLogLevel.ERROR,
  };
  const chosen = levels[level];
  if (!chosen) throw new Error(`logLevel must be one of ${Object.keys(levels).join(", ")}, got ${String(context)}`);
  return chosen;
}
