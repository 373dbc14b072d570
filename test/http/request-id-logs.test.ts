import { logger } from "#shared/observability/powertools";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openApiRoutes } from "#functions/http/openapi/routes";
import { repositoryRoot } from "#infra/repository-root";
import { createGateway } from "#local/gateway";
import type { RouteDefinition } from "#shared/http/route";

/**
 * The local gateway itself (not the routes behind it), started in this test process with a route
 * table chosen by the test.
 */
const started: Server[] = [];

async function startGateway(routes: readonly RouteDefinition[]): Promise<string> {
  const gateway = createGateway({ routes, basePath: "/v3", rootDirectory: repositoryRoot });
  started.push(gateway);
  await new Promise<void>((listening) => gateway.listen(0, "127.0.0.1", listening));
  return `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/v3`;
}

afterEach(async () => {
  await Promise.all(
    started.splice(0).map(
      (gateway) =>
        new Promise<void>((closed) => {
          gateway.closeAllConnections();
          gateway.close(() => closed());
        }),
    ),
  );
});

// Its own file: Powertools keeps process-wide state (the invocation store, the log level), which other
// gateway tests in the same module instance would have changed before this one reads the logs.
describe("Request ids", () => {
  it("are the id the request's log lines carry", async () => {
    // The Powertools logger reads LOG_LEVEL once, when it loads (tests load it silent): set it on the logger.
    // The Powertools logger reads LOG_LEVEL once, when it loads (tests load it silent): set it on the logger.
    const before = logger.getLevelName();
    logger.setLogLevel("INFO");
    const written: string[] = [];
    const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const baseUrl = await startGateway([openApiRoutes.get]);
      const response = await fetch(`${baseUrl}/openapi.json`);
      expect(response.status).toBe(200);
      const requestId = response.headers.get("x-request-id") as string;
      expect(requestId).toBeTruthy();
      expect(written.filter((line) => line.includes(requestId)).length).toBeGreaterThan(0);
    } finally {
      spy.mockRestore();
      logger.setLogLevel(before);
    }
  });
});

