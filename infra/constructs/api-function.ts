import { Duration, RemovalPolicy } from "aws-cdk-lib";
import { Architecture, Runtime } from "aws-cdk-lib/aws-lambda";
import { NodejsFunction, type NodejsFunctionProps, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { join } from "node:path";

/**
 * The defaults every function of this product shares, fixed once: Node.js 24 on ARM64, bundled by
 * the local esbuild (never Docker) with the AWS SDK inside the bundle, source maps, and a log group
 * with a retention period (its own unless one is given).
 */
export interface ProductFunctionProps extends Omit<NodejsFunctionProps, "entry" | "runtime" | "architecture"> {
  /** Handler module relative to the repository root (the route table's `handler`). */
  entry: string;
  repositoryRoot: string;
}

export class ProductFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ProductFunctionProps) {
    const { repositoryRoot, entry, environment, ...rest } = props;
    // API functions share their area's log group (passed in); the jobs get one each.
    const logGroup = props.logGroup ?? new LogGroup(scope, `${id}Logs`, { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    super(scope, id, {
      entry: join(repositoryRoot, entry),
      handler: "handler",
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.seconds(29),
      logGroup,
      projectRoot: repositoryRoot,
      depsLockFilePath: join(repositoryRoot, "package-lock.json"),
      bundling: {
        format: OutputFormat.CJS,
        target: "node24",
        minify: true,
        sourceMap: true,
        // Bundle the SDK (pinned by package-lock) instead of relying on the runtime's copy.
        bundleAwsSDK: true,
        forceDockerBundling: false,
      },
      environment: { NODE_OPTIONS: "--enable-source-maps", ...environment },
      ...rest,
    });
  }
}
