import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkedLookup, createExternalProvider } from "#shared/http/external-provider";

/** The external-API fetch on its own, against a loopback server started here. */
let server: Server;
let baseUrl = "";

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === "/slow") return; // never answers
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify([{ dataId: "A" }]));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("External provider fetch", () => {
  it("reads items from an allowed address", async () => {
    const provider = createExternalProvider({ allowLoopback: () => true });
    expect(await provider.fetchItems({ url: `${baseUrl}/items` })).toEqual([{ dataId: "A" }]);
  });

  it("refuses loopback unless the test-only setting allows it", async () => {
    const provider = createExternalProvider({ allowLoopback: () => false });
    await expect(provider.fetchItems({ url: `${baseUrl}/items` })).rejects.toMatchObject({
      statusCode: 502,
      message: expect.stringContaining("loopback"),
    });
    await expect(provider.fetchItems({ url: "http://[::ffff:127.0.0.1]:1/" })).rejects.toMatchObject({
      statusCode: 502,
      message: expect.stringContaining("must not point at a loopback address"),
    });
  });

  // The message proves the address check refused them (not a timeout or a failed connection).
  it.each(["http://169.254.169.254/latest/meta-data", "http://10.0.0.1/", "http://[64:ff9b::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::]/"])(
    "refuses the private or link-local address of %s even when loopback is allowed",
    async (url) => {
      const provider = createExternalProvider({ allowLoopback: () => true });
      await expect(provider.fetchItems({ url })).rejects.toMatchObject({
        statusCode: 502,
        message: expect.stringContaining("must not point at a private, link-local or reserved address"),
      });
    },
  );

  it("re-checks the resolved address of a host name", async () => {
    const refused = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      checkedLookup(false)("localhost", {}, (error) => resolve(error)),
    );
    expect(refused?.code).toBe("EDISALLOWED");
    const allowed = await new Promise<string>((resolve, reject) =>
      checkedLookup(true)("localhost", {}, (error, address) => (error ? reject(error) : resolve(String(address)))),
    );
    expect(["127.0.0.1", "::1"]).toContain(allowed);
  });

  it("gives up after the timeout", async () => {
    const provider = createExternalProvider({ allowLoopback: () => true, timeoutMs: 200 });
    await expect(provider.fetchItems({ url: `${baseUrl}/slow` })).rejects.toMatchObject({
      statusCode: 502,
      message: expect.stringContaining("200 ms"),
    });
  });
});
