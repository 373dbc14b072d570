import { Logger } from "@aws-lambda-powertools/logger";
import type { LogLevel } from "@aws-lambda-powertools/logger/types";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";

/**
 * The product's Powertools for AWS Lambda instances, created once at module scope and shared by
 * every function (the HTTP handlers' middy stack and the jobs add the per-invocation keys).
 *
 * - `logger`: one JSON line per event with the Lambda context (`function_request_id`, `cold_start`,
 *   function name) and the keys the handlers append per invocation (`operationId`, `organizationId`,
 *   `userId`, `job` …). Keys live in the invocation's scope: `injectLambdaContext({ resetKeys: true })`
 *   drops them when the invocation ends, and where invocations run concurrently in one process
 *   (Lambda Managed Instances, `npm start`) Powertools keeps them in the runtime's InvokeStore, one
 *   per invocation. `message` and `level` are reserved: an extra field of that name is dropped.
 *   Debug lines of a sampled share of invocations: `POWERTOOLS_LOGGER_SAMPLE_RATE`.
 * - `metrics`: CloudWatch EMF, dimensioned by operation (route) or job, never by tenant.
 *
 * Service and namespace come from `POWERTOOLS_SERVICE_NAME` / `POWERTOOLS_METRICS_NAMESPACE`.
 */
const serviceName = process.env.POWERTOOLS_SERVICE_NAME || "field-operations-api";

export const logger = new Logger({
  serviceName,
  // The product's LOG_LEVEL is lower case (`silent` silences tests); Powertools reads only upper case from the environment.
  logLevel: (process.env.POWERTOOLS_LOG_LEVEL ?? process.env.LOG_LEVEL ?? "info").toUpperCase() as LogLevel,
});

export const metrics = new Metrics({
  serviceName,
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || "FieldOperations",
  // Its own warnings (an invocation without metrics, a bad dimension) go through the same logger.
  logger,
});

export { MetricUnit };
