import { resolve } from "node:path";
import { BroadcastChannel } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { openApiRoutes } from "#functions/http/openapi/routes";
import { repositoryRoot } from "#infra/repository-root";
import { startGateway } from "#test/support/gateway-server";
import { startJobThread } from "#local/job-thread";
import { resetAppConfig } from "#shared/config/env";

describe("Local gateway", () => {
  it("answers a failure of its own (here: a handler module that cannot load) with 500 in the product's error shape", async () => {
    const baseUrl = await startGateway([{ ...openApiRoutes.get, handler: "functions/http/openapi/no-such-handler.ts" }]);
    const response = await fetch(`${baseUrl}/openapi.json`);
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      status: false,
      message: "Internal server error, please contact support.",
      failedCode: "sys-500",
    });
  });
});

describe("Local gateway with a list of allowed origins (CORS_ALLOWED_ORIGINS)", () => {
  const withAllowedOrigins = async (value: string, test: () => Promise<void>) => {
    const before = process.env.CORS_ALLOWED_ORIGINS;
    process.env.CORS_ALLOWED_ORIGINS = value;
    resetAppConfig();
    try {
      await test();
    } finally {
      if (before === undefined) delete process.env.CORS_ALLOWED_ORIGINS;
      else process.env.CORS_ALLOWED_ORIGINS = before;
      resetAppConfig();
    }
  };

  it("echoes a listed Origin with Vary: Origin, and allows no other origin, on handler answers, its own answers and preflights", async () => {
    await withAllowedOrigins(" https://app.example.com, https://admin.example.com:8443 ", async () => {
      const baseUrl = await startGateway([openApiRoutes.get]);
      for (const origin of ["https://app.example.com", "https://admin.example.com:8443"]) {
        for (const [label, response] of [
          ["handler", await fetch(`${baseUrl}/openapi.json`, { headers: { origin } })],
          ["404", await fetch(`${baseUrl}/no-such-thing`, { headers: { origin } })],
          ["405", await fetch(`${baseUrl}/openapi.json`, { method: "DELETE", headers: { origin } })],
          [
            "preflight",
            await fetch(`${baseUrl}/openapi.json`, { method: "OPTIONS", headers: { origin, "access-control-request-method": "GET" } }),
          ],
        ] as const) {
          expect(response.headers.get("access-control-allow-origin"), `${label} ${origin}`).toBe(origin);
          expect(response.headers.get("vary"), `${label} ${origin}`).toBe("Origin");
        }
      }
      for (const origin of ["https://evil.example.com", "https://app.example.com.evil.example", "null"]) {
        const response = await fetch(`${baseUrl}/openapi.json`, { headers: { origin } });
        expect(response.status).toBe(200);
        expect(response.headers.get("access-control-allow-origin"), origin).toBeNull();
        expect(response.headers.get("vary")).toBe("Origin");
      }
    });
  });
});

describe("Local job threads", () => {
  it("answer requests while a job keeps its thread busy (the gateway's event loop stays free)", async () => {
    const baseUrl = await startGateway([openApiRoutes.get]);
    const job = startJobThread<{ channel: string; busyMs: number }, { busyMs: number }>(
      resolve(repositoryRoot, "test/fixtures/local/cpu-bound-job.ts"),
    );
    const channelName = `cpu-bound-job-${process.pid}-${Date.now()}`;
    const channel = new BroadcastChannel(channelName);
    try {
      const started = new Promise<void>((announced) => (channel.onmessage = () => announced()));
      let jobFinished = false;
      const run = job.invoke({ channel: channelName, busyMs: 120_000 }).then(
        () => (jobFinished = true),
        () => undefined,
      );
      await started;
      const response = await fetch(`${baseUrl}/openapi.json`);
      expect(response.status).toBe(200);
      expect(jobFinished).toBe(false);
      await job.stop();
      await run;
    } finally {
      channel.close();
      await job.stop();
    }
  });

  it("run the real run worker module (TypeScript, import aliases) and report its errors", async () => {
    const job = startJobThread<unknown, { batchItemFailures: unknown[] }>(resolve(repositoryRoot, "functions/jobs/routing-run.ts"));
    try {
      // Not a run message: the worker acknowledges it (no failure reported), as in AWS.
      const event = { Records: [{ messageId: "m-1", receiptHandle: "r", body: "not json", attributes: { ApproximateReceiveCount: "1" } }] };
      expect(await job.invoke(event)).toEqual({ batchItemFailures: [] });
      await expect(job.invoke({ Records: null })).rejects.toThrow(/TypeError/);
    } finally {
      await job.stop();
    }
  });
});
