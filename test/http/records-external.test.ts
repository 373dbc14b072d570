import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import { createGateway } from "#local/gateway";
import { repositoryRoot } from "#infra/repository-root";
import { resetAppConfig } from "#shared/config/env";
import { type ApiClient, newOrganizationId, tokenFor } from "#test/support/local-api";
import { refusal } from "#test/support/refusals";

/**
 * External-api data types against a real HTTP server on loopback. Loopback providers need the
 * test-only ALLOW_LOOPBACK_PROVIDERS=true, which must not reach the shared test stack (the data
 * type tests check that loopback is refused there): this file runs the real handlers through its
 * own local gateway, in this worker only, with the setting on, against the same DynamoDB.
 */
process.env.ALLOW_LOOPBACK_PROVIDERS = "true";
resetAppConfig();

let gateway: Server;
let gatewayUrl = "";

function apiClient(token: string | undefined): ApiClient {
  const request: ApiClient["request"] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] = "application/json";
    }
    const response = await fetch(`${gatewayUrl}${path}`, { method, headers, body });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
  };
  return {
    request,
    get: (path) => request("GET", path),
    post: (path, body) => request("POST", path, { body }),
    put: (path, body) => request("PUT", path, { body }),
    patch: (path, body) => request("PATCH", path, { body }),
    delete: (path) => request("DELETE", path),
  };
}

function newTenant() {
  const organizationId = newOrganizationId();
  return { organizationId, api: apiClient(tokenFor({ organizationId })) };
}
const items = [
  { dataId: "Ext One", hubId: "hub-1", score: 7, label: "alpha beta" },
  { dataId: "Ext Two", hubId: "hub-2", score: 9, label: "gamma" },
  { dataId: "Bad Score", hubId: "hub-1", score: "nine" },
  { dataId: "Bad title!", hubId: "hub-1", score: 1 },
  { dataId: "Ext Three", hubId: "hub-1", score: 3, extra: "ignored" },
];

let server: Server;
let baseUrl = "";
const seenHeaders: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  gateway = createGateway({ routes, basePath: "/v3", rootDirectory: repositoryRoot });
  await new Promise<void>((resolve) => gateway.listen(0, "127.0.0.1", resolve));
  gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/v3`;
  server = createServer((request, response) => {
    seenHeaders.push(request.headers);
    if (request.url === "/items") return response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(items));
    if (request.url === "/wrapped")
      return response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: items.slice(0, 1) }));
    if (request.url === "/redirect") return response.writeHead(302, { location: "/items" }).end();
    if (request.url === "/big") return response.writeHead(200).end(`[${"1,".repeat(600_000)}1]`);
    if (request.url === "/text") return response.writeHead(200).end("hello");
    return response.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await new Promise((resolve) => gateway.close(resolve));
});

async function externalType(api: ApiClient, path: string, name = "Remote") {
  const response = await api.post("/data-type", {
    name,
    provider: "external-api",
    providerConfig: { url: `${baseUrl}${path}`, key: "Bearer remote-secret-1234" },
    fields: [
      { type: "title", title: "Name" },
      { id: "score", title: "Score", type: "number", required: true },
      { id: "label", title: "Label", type: "text", required: false, searchable: true },
    ],
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data_type as { _id: string };
}

describe("External-API data types", () => {
  it("lists items read from the API, validated against the type, in the record shape, with the key as Authorization", async () => {
    const { api, organizationId } = newTenant();
    const type = await externalType(api, "/items");
    const response = await api.get(`/data?dataTypeId=${type._id}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.map((item: { dataId: string }) => item.dataId)).toEqual(["Ext One", "Ext Two", "Ext Three"]);
    expect(response.body.data[0]).toMatchObject({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      dataId: "Ext One",
      dataTypeId: type._id,
      data_type: { _id: type._id, name: "Remote" },
      hubId: "hub-1",
      score: 7,
      label: "alpha beta",
      organizationId,
      createdBy: "external-api",
    });
    expect(response.body.data[2]).not.toHaveProperty("extra");
    expect(seenHeaders.at(-1)?.authorization).toBe("Bearer remote-secret-1234");

    const paged = await api.get(`/data?dataTypeId=${type._id}&limit=2`);
    expect(paged.body.data).toHaveLength(2);
    const rest = await api.get(`/data?dataTypeId=${type._id}&limit=2&cursor=${paged.body.nextCursor}`);
    expect(rest.body.data.map((item: { dataId: string }) => item.dataId)).toEqual(["Ext Three"]);
    expect(rest.body.nextCursor).toBeNull();

    expect((await api.get(`/data?dataTypeId=${type._id}&q=bet`)).body.data.map((item: { dataId: string }) => item.dataId)).toEqual([
      "Ext One",
    ]);
    expect((await api.get(`/data?dataTypeId=${type._id}&hubId=hub-2`)).body.data.map((item: { dataId: string }) => item.dataId)).toEqual([
      "Ext Two",
    ]);
    const restricted = apiClient(tokenFor({ organizationId, hubIds: ["hub-2"] }));
    expect((await restricted.get(`/data?dataTypeId=${type._id}`)).body.data.map((item: { dataId: string }) => item.dataId)).toEqual([
      "Ext Two",
    ]);
  });

  it("reads one item by dataId, applies hidden fields, and refuses writes", async () => {
    const { api, organizationId } = newTenant();
    const type = await externalType(api, "/items");
    const one = await api.get("/data/type/Remote/Ext%20Two");
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ dataId: "Ext Two", score: 9 });
    expect((await api.get(`/data/Ext%20One?dataTypeId=${type._id}`)).body.data.score).toBe(7);
    expect(refusal(await api.get("/data/type/Remote/Bad%20Score"))).toEqual({ status: 404, failedCode: "sys-404" });
    const hidden = apiClient(
      tokenFor({ organizationId, permissionDetails: [{ permissionName: "view/data", dataTypeId: type._id, hiddenFields: ["score"] }] }),
    );
    expect((await hidden.get("/data/type/Remote/Ext%20Two")).body.data).not.toHaveProperty("score");
    expect(refusal(await hidden.get("/data/type/Remote/Ext%20Two?fields=score"))).toEqual({ status: 403, failedCode: "data-403" });

    const write = await api.post("/data", { dataTypeId: type._id, hubId: "hub-1", dataId: "New", score: 1 });
    expect(refusal(write)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(write.body.errors[0].field).toBe("dataTypeId");
    expect(refusal(await api.get("/data/type/Remote/New"))).toEqual({ status: 404, failedCode: "sys-404" });
    expect(refusal(await api.put("/data/type/Remote/Ext%20Two", { score: 1 }))).toEqual({ status: 400, failedCode: "sys-400" });
    expect(refusal(await api.delete("/data/type/Remote/Ext%20Two"))).toEqual({ status: 400, failedCode: "sys-400" });
  });

  it.each(["--", "%20.%20", "_"])(
    "answers 400 on q for a q without letters or digits (%s), as for stored types, without reading the API",
    async (q) => {
      const { api } = newTenant();
      const type = await externalType(api, "/items");
      const before = seenHeaders.length;
      const response = await api.get(`/data?dataTypeId=${type._id}&q=${encodeURIComponent(decodeURIComponent(q))}`);
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.errors).toEqual([{ field: "q", message: "q must contain at least one letter or digit" }]);
      expect(seenHeaders.length).toBe(before);
    },
  );

  it("accepts an object with a data array", async () => {
    const { api } = newTenant();
    const type = await externalType(api, "/wrapped");
    expect((await api.get(`/data?dataTypeId=${type._id}`)).body.data.map((item: { dataId: string }) => item.dataId)).toEqual(["Ext One"]);
  });

  it.each([
    ["a redirect", "/redirect", "redirect"],
    ["an answer above 1 MB", "/big", "larger"],
    ["an answer that is not JSON", "/text", "not JSON"],
    ["an HTTP error", "/fails", "HTTP 500"],
  ])("answers 502 for %s", async (_, path, fragment) => {
    const { api } = newTenant();
    const type = await externalType(api, path);
    const response = await api.get(`/data?dataTypeId=${type._id}`);
    expect(response.status).toBe(502);
    expect(response.body).toMatchObject({ status: false, failedCode: "data-502", message: expect.stringContaining(fragment) });
  });
});
