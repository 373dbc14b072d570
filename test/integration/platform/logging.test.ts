import { afterEach, describe, expect, it, vi } from "vitest";
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context, ScheduledEvent, SQSEvent } from "aws-lambda";

// Logs and EMF are off in the test environment; this file reads them, so they are on here (set
// before the modules load: injectLambdaContext resets the level to the initial one per invocation).
vi.hoisted(() => {
  process.env.LOG_LEVEL = "info";
  process.env.POWERTOOLS_METRICS_DISABLED = "false";
});

import { createRoutingRunHandler } from "#functions/jobs/routing-run";
import { handler as tick } from "#functions/jobs/scheduler-tick";
import { invokeHandler, jobContext } from "#local/invocation";
import type { RunWorkerPorts } from "#shared/domain/runs/run-worker";
import { httpHandler } from "#shared/http/handler";
import { authorizerContextOf } from "#shared/http/authorizer-context";
import { callerFromClaims } from "#shared/domain/caller";
import { defineRoute } from "#shared/http/route";
import { logger } from "#shared/observability/powertools";
import { resetAppConfig } from "#shared/config/env";
import { newOrganizationId, tokenFor } from "#test/support/local-api";

/**
 * Log lines and metrics belong to their invocation: the local runtime (like Lambda Managed
 * Instances) runs a request, the tick and the worker at once in one process, and none of them may
 * carry another's keys. No field may replace a line's `message` or `level`.
 */
type Line = Record<string, unknown> & { message?: string };

let lines: Line[] = [];
const capture = (chunk: unknown) => {
  for (const text of String(chunk).split("\n")) {
    if (text.trim().startsWith("{")) lines.push(JSON.parse(text) as Line);
  }
  return true;
};

afterEach(() => {
  vi.restoreAllMocks();
  lines = [];
});

function captureOutput() {
  vi.spyOn(process.stdout, "write").mockImplementation(capture);
  vi.spyOn(process.stderr, "write").mockImplementation(capture);
}

function gate() {
  let open!: () => void;
  let reached!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const arrived = new Promise<void>((resolve) => {
    reached = resolve;
  });
  return {
    open,
    arrived,
    pass: async () => {
      reached();
      return opened;
    },
  };
}

const probeRoute = defineRoute({
  operationId: "loggingProbe",
  method: "GET",
  path: "/logging-probe",
  handler: "test/integration/platform/logging.test.ts",
  summary: "A request that waits where the test tells it to",
  tag: "test",
  permission: "view/vehicle",
  responses: () => ({ 200: { description: "done" } }),
});

function probeHandler(wait?: () => Promise<void>) {
  return httpHandler(probeRoute, async () => {
    logger.info("probe working");
    await wait?.();
    logger.info("probe resumed");
    return { statusCode: 200, body: { status: true } };
  });
}

/** The event as the gateway passes it on: the tenant authorizer's context holds the caller of a well-formed token (none otherwise). */
function probeEvent(token: string): APIGatewayProxyEvent {
  let caller: ReturnType<typeof callerFromClaims> | undefined;
  try {
    caller = callerFromClaims(JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")));
  } catch {
    caller = undefined;
  }
  const requestContext = { authorizer: caller ? authorizerContextOf(caller) : null };
  return {
    httpMethod: "GET",
    path: "/logging-probe",
    headers: { Authorization: `Bearer ${token}` },
    requestContext,
    body: null,
  } as unknown as APIGatewayProxyEvent;
}

const requestContext = (awsRequestId: string) => ({ awsRequestId, functionName: "loggingProbe" }) as Context;

// A minute with nothing due (the table is shared with other test files): the tick only reads.
const quietTick: ScheduledEvent = { time: "2001-01-01T00:00:00Z" } as ScheduledEvent;

/**
 * Logging outside a handler, as each Lambda runtime would run it. The concurrent runtime (Lambda
 * Managed Instances, `npm start`) sets AWS_LAMBDA_MAX_CONCURRENCY and runs every invocation in its own
 * InvokeStore scope: Powertools then keeps log keys in that scope and refuses (throws "No context
 * available") to log outside one, so a line is logged inside the scope of an invocation. The standard
 * runtime runs one invocation at a time without the variable: Powertools keeps the keys on the logger.
 */
const inInvocation = (awsRequestId: string, work: () => void) => invokeHandler(async () => work(), {}, requestContext(awsRequestId));

async function onStandardRuntime(work: () => Promise<void>): Promise<void> {
  const concurrency = process.env.AWS_LAMBDA_MAX_CONCURRENCY;
  delete process.env.AWS_LAMBDA_MAX_CONCURRENCY;
  try {
    await work();
  } finally {
    if (concurrency !== undefined) process.env.AWS_LAMBDA_MAX_CONCURRENCY = concurrency;
  }
}

const linesWith = (message: string) => lines.filter((line) => line.message === message);
const emfOf = (metricName: string) =>
  lines.filter((line) =>
    (line._aws as { CloudWatchMetrics?: Array<{ Metrics: Array<{ Name: string }> }> } | undefined)?.CloudWatchMetrics?.[0]?.Metrics.some(
      (m) => m.Name === metricName,
    ),
  );

describe("Module: per-invocation logging", () => {
  it("a tick that runs while a request is in flight carries none of the request's keys, and the request keeps its own", async () => {
    // Prepare
    const organizationId = newOrganizationId();
    const token = tokenFor({ organizationId, sub: "alice" });
    const requestGate = gate();
    captureOutput();

    // Act
    const request = invokeHandler(probeHandler(requestGate.pass), probeEvent(token), requestContext("request-1"));
    await requestGate.arrived;
    await invokeHandler(tick, quietTick, jobContext("scheduler-tick", 55));
    requestGate.open();
    const response = (await request) as APIGatewayProxyResult;

    // Assess
    expect(response.statusCode).toBe(200);
    const [tickLine] = linesWith("scheduler tick");
    expect(tickLine).toMatchObject({ job: "scheduler-tick", tickTime: quietTick.time, level: "INFO" });
    expect(tickLine).not.toHaveProperty("operationId");
    expect(tickLine).not.toHaveProperty("userId");
    expect(tickLine).not.toHaveProperty("organizationId");
    expect(tickLine?.function_request_id).not.toBe("request-1");
    for (const message of ["probe working", "probe resumed"]) {
      const [line] = linesWith(message);
      expect(line, message).toMatchObject({
        operationId: "loggingProbe",
        organizationId,
        userId: "alice",
        function_request_id: "request-1",
      });
      expect(line, message).not.toHaveProperty("job");
      expect(line, message).not.toHaveProperty("tickTime");
    }
  });

  it("a request that runs while the worker is in flight does not change the worker's keys; the run message does not replace the line's message", async () => {
    // Prepare
    const organizationId = newOrganizationId();
    const token = tokenFor({ organizationId, sub: "bob" });
    const workerGate = gate();
    const ports = {
      results: {
        find: async () => {
          await workerGate.pass();
          return undefined;
        },
      },
      releaseActiveRun: async () => undefined,
      now: () => new Date(),
    } as unknown as RunWorkerPorts;
    const worker = createRoutingRunHandler(() => ports);
    const message = { kind: "onDemand", organizationId: "org-of-the-run", resultId: "result-1" };
    const sqsEvent = {
      Records: [{ messageId: "message-1", body: JSON.stringify(message), attributes: { ApproximateReceiveCount: "1" } }],
    } as unknown as SQSEvent;
    captureOutput();

    // Act
    const run = invokeHandler(worker, sqsEvent, jobContext("routing-run", 60));
    await workerGate.arrived;
    await invokeHandler(probeHandler(), probeEvent(token), requestContext("request-2"));
    workerGate.open();
    const batch = await run;

    // Assess
    expect(batch.batchItemFailures).toEqual([]);
    const [runLine] = lines.filter((line) => line.job === "routing-run" && line.outcome === "ignored");
    expect(runLine).toMatchObject({ message: "routing run", level: "INFO", messageId: "message-1", runMessage: message });
    expect(runLine).not.toHaveProperty("operationId");
    expect(runLine).not.toHaveProperty("userId");
    expect(runLine?.function_request_id).not.toBe("request-2");
    const [requestLine] = linesWith("probe working");
    expect(requestLine).toMatchObject({ operationId: "loggingProbe", userId: "bob" });
    expect(requestLine).not.toHaveProperty("job");
    expect(requestLine).not.toHaveProperty("messageId");
  });

  it("keys end with their invocation: a line logged after it carries none of them, on either runtime", async () => {
    // Prepare
    const token = tokenFor({ organizationId: newOrganizationId(), sub: "carol" });
    captureOutput();

    // Act
    // Concurrent runtime: the next line belongs to the next invocation's scope.
    await invokeHandler(probeHandler(), probeEvent(token), requestContext("request-3"));
    await inInvocation("request-3b", () => logger.info("after a concurrent invocation"));
    // Standard runtime: no scope at all; the keys live on the logger between invocations.
    await onStandardRuntime(async () => {
      await probeHandler()(probeEvent(token), requestContext("request-4"));
      logger.info("after a standard invocation");
    });

    // Assess
    expect(linesWith("probe working")).toHaveLength(2);
    for (const message of ["after a concurrent invocation", "after a standard invocation"]) {
      const [line] = linesWith(message);
      expect(line, message).toBeDefined();
      // (The Lambda context itself stays until the next invocation replaces it, as in a warm Lambda.)
      for (const key of ["operationId", "organizationId", "userId", "job"]) expect(line, message).not.toHaveProperty(key);
    }
  });

  it("an extra field named message or level never replaces the line's own", async () => {
    // Prepare
    captureOutput();

    // Act
    await inInvocation("request-extra", () => logger.info("the line's own message", { message: "clobbered", level: "DEBUG", detail: 1 }));

    // Assess
    const [line] = lines.filter((entry) => entry.detail === 1);
    expect(line).toMatchObject({ message: "the line's own message", level: "INFO" });
  });
});

describe("Module: request logging", () => {
  afterEach(() => {
    delete process.env.SLOW_REQUEST_MS;
    resetAppConfig();
  });

  it("a request answered well, or refused, logs no line of its own: the access log has its status and latency", async () => {
    // Prepare
    const token = tokenFor({ organizationId: newOrganizationId(), sub: "erin" });
    captureOutput();

    // Act
    await invokeHandler(probeHandler(), probeEvent(token), requestContext("request-7"));
    await invokeHandler(probeHandler(), probeEvent("not-a-token"), requestContext("request-8"));

    // Assess
    expect(lines.map((line) => line.message)).toEqual(["probe working", "probe resumed"]);
  });

  it("a failed request logs `request failed` (ERROR) with its status, failedCode, duration and the invocation's keys", async () => {
    // Prepare
    const organizationId = newOrganizationId();
    const failing = httpHandler(probeRoute, async () => {
      throw new Error("the probe broke");
    });
    captureOutput();

    // Act
    const response = (await invokeHandler(
      failing,
      probeEvent(tokenFor({ organizationId, sub: "frank" })),
      requestContext("request-9"),
    )) as APIGatewayProxyResult;

    // Assess
    expect(response.statusCode).toBe(500);
    const [line] = linesWith("request failed");
    expect(line).toMatchObject({
      level: "ERROR",
      status: 500,
      failedCode: "sys-500",
      operationId: "loggingProbe",
      organizationId,
      userId: "frank",
    });
    expect(line?.durationMs).toEqual(expect.any(Number));
    expect(linesWith("unhandled error")).toHaveLength(1);
  });

  it("a request slower than SLOW_REQUEST_MS logs `slow request` (WARN) with its status and duration", async () => {
    // Prepare
    process.env.SLOW_REQUEST_MS = "0";
    resetAppConfig();
    const organizationId = newOrganizationId();
    captureOutput();

    // Act
    await invokeHandler(probeHandler(), probeEvent(tokenFor({ organizationId, sub: "gina" })), requestContext("request-10"));

    // Assess
    expect(linesWith("slow request")).toEqual([
      expect.objectContaining({ level: "WARN", status: 200, durationMs: expect.any(Number), operationId: "loggingProbe", organizationId }),
    ]);
  });
});

describe("Module: metrics", () => {
  it("a request publishes no custom metric (API Gateway's and its function's Lambda metrics cover it)", async () => {
    // Prepare
    const organizationId = newOrganizationId();
    captureOutput();

    // Act
    await invokeHandler(probeHandler(), probeEvent(tokenFor({ organizationId, sub: "dave" })), requestContext("request-5"));
    await invokeHandler(probeHandler(), probeEvent("not-a-token"), requestContext("request-6"));

    // Assess
    expect(lines.filter((line) => "_aws" in line)).toEqual([]);
  });

  it("the jobs publish the outcomes an operator acts on, dimensioned by job, and only those", async () => {
    // Prepare
    const ports = {
      results: { find: async () => undefined },
      releaseActiveRun: async () => undefined,
      now: () => new Date(),
    } as unknown as RunWorkerPorts;
    const message = { kind: "onDemand", organizationId: "org-of-the-run", resultId: "result-2" };
    const sqsEvent = { Records: [{ messageId: "message-2", body: JSON.stringify(message), attributes: {} }] } as unknown as SQSEvent;
    captureOutput();

    // Act
    await invokeHandler(
      createRoutingRunHandler(() => ports),
      sqsEvent,
      jobContext("routing-run", 60),
    );
    await invokeHandler(tick, quietTick, jobContext("scheduler-tick", 55));

    // Assess
    // An ignored run (its result is gone) is only logged.
    expect(emfOf("RunIgnored")).toEqual([]);
    expect(emfOf("TickEnqueued")[0]).toMatchObject({ job: "scheduler-tick", TickEnqueued: 0, TickFailed: 0, TickFannedOut: 0 });
    expect(emfOf("TickEnqueued")[0]).not.toHaveProperty("TickAlreadyClaimed");
    expect(emfOf("TickEnqueued")[0]).not.toHaveProperty("ColdStart");
  });
});
