import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
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

describe("Local gateway", () => {
  it("answers a failure of its own (here: a handler module that cannot load) with 500 in the product's error shape", async () => {
    const baseUrl = await startGateway([{ ...openApiRoutes.get, handler: "functions/http/openapi/no-such-handler.ts" }]);
    const response = await fetch(`${baseUrl}/openapi.json`);
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ status: false, message: "Internal server error, please contact support.", failedCode: "sys-500" });
  });
});
