import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";
import { repositoryRoot } from "#infra/repository-root";
import { createGateway } from "#local/gateway";
import type { RouteDefinition } from "#shared/http/route";

/**
 * The local gateway itself (not the routes behind it), started in the test process with a route
 * table chosen by the test, and closed after each test of the file that imports this.
 */
const started: Server[] = [];

export async function startGateway(routes: readonly RouteDefinition[]): Promise<string> {
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
