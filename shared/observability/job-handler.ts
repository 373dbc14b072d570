import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { Tracer } from "@aws-lambda-powertools/tracer";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import type { Context } from "aws-lambda";
import { logger, metrics } from "#shared/observability/powertools";
import { withInvocationDeadline } from "#shared/store/retry-budget";

/**
 * The Powertools stack of the background jobs (the scheduler tick and the routing-run worker).
 * Only the jobs trace: they are where time goes (many DynamoDB calls per tick, the optimizer and
 * the stores around it per run), and the tracer brings the X-Ray SDK, which the API functions
 * need not carry. Tracing is on only on Lambda (`POWERTOOLS_TRACE_ENABLED=false` elsewhere).
 */
export const tracer = new Tracer({ serviceName: process.env.POWERTOOLS_SERVICE_NAME || "field-operations-api" });

/**
 * Traces a job's module-scope SDK clients (called once at module scope): each call becomes a
 * subsegment of the invocation's trace. A getter, so no client is created where tracing is off.
 */
export function traceClients(...clients: Array<() => Parameters<Tracer["captureAWSv3Client"]>[0]>): void {
  if (!tracer.isTracingEnabled()) return;
  for (const client of clients) tracer.captureAWSv3Client(client());
}

/**
 * Wraps a job's handler: trace segment, Lambda context and `job` on every log line (dropped when
 * the invocation ends), and the invocation's metrics published as EMF, dimensioned by job.
 * The context is optional so tests and the local runtime can call it with the event alone.
 */
export function jobHandler<TEvent, TResult>(job: string, run: (event: TEvent, context: Context) => Promise<TResult>) {
  const handler = middy<TEvent, TResult>()
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(injectLambdaContext(logger, { resetKeys: true }))
    // Cold starts are in each function's log (cold_start) and Init Duration; not a metric worth paying for.
    .use(logMetrics(metrics, { captureColdStartMetric: false }))
    .use({
      before: () => {
        logger.appendKeys({ job });
        metrics.addDimension("job", job);
      },
    })
    .handler(run);
  // Contention retries spend at most what the invocation has left (shared/store/retry-budget.ts).
  return (event: TEvent, context?: Context): Promise<TResult> =>
    withInvocationDeadline(context, () => handler(event, context ?? ({} as Context)));
}
