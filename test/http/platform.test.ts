import { describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import { apiClient, baseUrl, newTenant } from "#test/support/local-api";
import { refusal } from "#test/support/refusals";
import { inlineRefs } from "#test/support/openapi-refs";

describe("HTTP platform behaviour through the local gateway", () => {
  it("answers malformed JSON with 400, not 500", async () => {
    const { api } = newTenant();
    const response = await api.request("POST", "/vehicle", { rawBody: "{not json", headers: { "content-type": "application/json" } });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: false, message: "Bad request - invalid parameters provided.", failedCode: "sys-400" });
    expect(response.body.errors).toEqual([{ field: "body", message: "body is not valid JSON" }]);
    expect((await api.get("/vehicles")).body.data).toEqual([]);
  });

  it("answers a non-JSON content type with 415", async () => {
    const { api } = newTenant();
    const response = await api.request("POST", "/vehicle", { rawBody: "name=x", headers: { "content-type": "text/plain" } });
    expect(response.status).toBe(415);
    expect(response.body).toMatchObject({ status: false, failedCode: "sys-415" });
    expect((await api.get("/vehicles")).body.data).toEqual([]);
  });

  it("answers an empty body with 400", async () => {
    const { api } = newTenant();
    const response = await api.request("POST", "/vehicle", { headers: { "content-type": "application/json" } });
    expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
    expect((await api.get("/vehicles")).body.data).toEqual([]);
  });

  it("answers an oversized JSON body with 413", async () => {
    const { api } = newTenant();
    const response = await api.request("POST", "/vehicle", {
      rawBody: JSON.stringify({ name: "x".repeat(1024 * 1024 + 10), hubId: "h" }),
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(413);
    expect(response.body).toMatchObject({ status: false, failedCode: "sys-413" });
    expect((await api.get("/vehicles")).body.data).toEqual([]);
  });

  it("answers a path parameter with a malformed percent-encoding with 400 in the error model", async () => {
    const { api } = newTenant();
    const response = await api.get("/vehicle/%E0%A4%A");
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: false, failedCode: "sys-400", errors: [{ field: "path", message: expect.any(String) }] });
  });

  it("answers an unknown route with 404 and a wrong method with 405", async () => {
    const { api } = newTenant();
    expect(refusal(await api.get("/no-such-thing"))).toEqual({ status: 404, failedCode: "sys-404" });
    expect(refusal(await api.request("PATCH", "/vehicles"))).toEqual({ status: 405, failedCode: "sys-405" });
  });

  it("treats query and header names that are Object.prototype members as plain names", async () => {
    const { api } = newTenant();
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      const document = await api.get(`/openapi.json?${name}=1`);
      expect(document.status, `query ${name}`).toBe(200);
      // Given twice, it is refused by its name like any repeated parameter.
      const repeated = await api.get(`/openapi.json?${name}=1&${name}=2`);
      expect(refusal(repeated), `query ${name} twice`).toEqual({ status: 400, failedCode: "sys-400" });
      expect(repeated.body.errors, `query ${name} twice`).toEqual([expect.objectContaining({ field: name })]);
      // List queries refuse unknown parameters: a 400 in the error model, like any other unknown name.
      const listed = await api.get(`/vehicles?${name}=1`);
      expect(listed.status, `query ${name}`).toBe(400);
      expect(listed.body).toMatchObject({ status: false, failedCode: "sys-400" });
    }
    for (const name of ["toString", "__proto__", "hasOwnProperty", "constructor", "valueOf"]) {
      const response = await api.request("GET", "/vehicles", { headers: { [name]: "1" } });
      expect(response.status, `header ${name}`).toBe(200);
      expect(response.body.status).toBe(true);
    }
  });

  it("answers 401 on every authenticated route of the route table when the token is missing", async () => {
    const anonymous = apiClient(undefined);
    for (const route of routes.filter((r) => r.auth !== "none")) {
      const path = route.path.replace(/\{\w+\}/g, "0123456789abcdef01234567");
      const response = await anonymous.request(route.method, path, route.method === "GET" || route.method === "DELETE" ? {} : { body: {} });
      expect(refusal(response), `${route.method} ${route.path}`).toEqual({ status: 401, failedCode: "sys-401" });
    }
  });

  it("describes every route of the route table in the OpenAPI document", async () => {
    const document = (await apiClient(undefined).get("/openapi.json")).body;
    for (const route of routes) {
      const operation = document.paths[route.path]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      expect(operation.operationId).toBe(route.operationId);
    }
    const createVehicle = document.paths["/vehicle"].post;
    expect(inlineRefs(document, createVehicle.requestBody.content["application/json"].schema).required).toEqual(
      expect.arrayContaining(["name", "hubId"]),
    );
  });

  it("answers a cursor whose start key was edited with 400 naming cursor, on table and index lists", async () => {
    const { api } = newTenant();
    const hubIds: string[] = [];
    for (const name of ["North", "South"])
      hubIds.push((await api.post("/hub", { name, address: "Jl. 1", lat: -6.2, lng: 106.8 })).body.data._id);
    for (const name of ["Van 1", "Van 2"]) expect((await api.post("/vehicle", { name, hubId: hubIds[0] })).status).toBe(201);
    // A cursor is `<base64url key>.<fingerprint of the list's filters>`: edit the key, keep the fingerprint.
    let fingerprint = "";
    const decode = (cursor: string) => {
      const [key, print] = cursor.split(".");
      fingerprint = print as string;
      return JSON.parse(Buffer.from(key as string, "base64url").toString("utf8")) as Record<string, string>;
    };
    const encode = (key: Record<string, string>) => `${Buffer.from(JSON.stringify(key)).toString("base64url")}.${fingerprint}`;
    for (const list of ["/hubs?limit=1", "/vehicles?limit=1", `/vehicles?limit=1&hubId=${hubIds[0]}`]) {
      const firstPage = await api.get(list);
      expect(firstPage.status).toBe(200);
      const key = decode(firstPage.body.nextCursor);
      const sortKey = Object.keys(key).find((attribute) => attribute.endsWith("SK")) as string;
      for (const edited of [
        { ...key, extra: "x" },
        { ...key, [sortKey]: "" },
        Object.fromEntries(Object.entries(key).filter(([attribute]) => attribute !== "SK")),
      ]) {
        const response = await api.get(`${list}&cursor=${encode(edited)}`);
        expect(response.status, `${list} ${JSON.stringify(edited)}`).toBe(400);
        expect(response.body.errors).toEqual([{ field: "cursor", message: expect.any(String) }]);
      }
    }
  });

  describe("headers on every answer", () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const expectPlatformHeaders = (response: { status: number; headers: Headers }, label: string) => {
      expect(response.headers.get("access-control-allow-origin"), label).toBe("*");
      expect(response.headers.get("access-control-expose-headers"), label).toBe("X-Request-Id,ETag,Idempotency-Replayed,Retry-After");
      expect(response.headers.get("x-request-id"), label).toMatch(uuid);
    };

    it("carry CORS and a request id of their own on success, handler errors and the gateway's own errors", async () => {
      const { api } = newTenant();
      const answers = {
        "200": await api.get("/vehicles"),
        "400": await api.post("/vehicle", {}),
        "404 (route)": await api.get("/no-such-thing"),
        "404 (outside the stage)": await fetch(new URL("/elsewhere", baseUrl())),
        "405": await api.request("PATCH", "/vehicles"),
        "413": await api.request("POST", "/vehicle", {
          rawBody: "x".repeat(10 * 1024 * 1024 + 1),
          headers: { "content-type": "application/json" },
        }),
        "401": await apiClient(undefined).get("/vehicles"),
      };
      for (const [label, response] of Object.entries(answers))
        expectPlatformHeaders(response as { status: number; headers: Headers }, label);
      const ids = Object.values(answers).map((response) => (response as { headers: Headers }).headers.get("x-request-id"));
      expect(new Set(ids).size).toBe(ids.length);
    });

    it("answer 405 with Allow listing the resource's methods", async () => {
      const { api } = newTenant();
      const response = await api.request("PATCH", "/vehicles");
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("GET, OPTIONS");
      expect(response.body).toMatchObject({ status: false, failedCode: "sys-405" });
      expect((await api.get("/vehicles")).body.data).toEqual([]);
    });

    it("answer 401 with a bearer challenge (the authorizer's UNAUTHORIZED gateway response: one fixed header value)", async () => {
      const missing = await apiClient(undefined).get("/vehicles");
      expect(refusal(missing)).toEqual({ status: 401, failedCode: "sys-401" });
      expect(missing.headers.get("www-authenticate")).toBe("Bearer");
      const refused = await apiClient("not.a.token").get("/vehicles");
      expect(refused.status).toBe(401);
      expect(refused.headers.get("www-authenticate")).toBe("Bearer");
      expect(refused.body).toMatchObject({ status: false, failedCode: "sys-401" });
      const { api } = newTenant();
      expect((await api.get("/vehicles")).headers.get("www-authenticate")).toBeNull();
    });

    it("answer a CORS preflight like API Gateway's: 204 with the allowed methods and headers", async () => {
      const response = await fetch(`${baseUrl()}/vehicle/0123456789abcdef01234567`, {
        method: "OPTIONS",
        headers: {
          origin: "https://app.example.com",
          "access-control-request-method": "PUT",
          "access-control-request-headers": "authorization,content-type",
        },
      });
      expect(response.status).toBe(204);
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(response.headers.get("access-control-allow-methods")).toBe("OPTIONS,GET,PUT,POST,DELETE,PATCH,HEAD");
      expect(response.headers.get("access-control-allow-headers")).toBe("Authorization,Content-Type,Idempotency-Key,If-Match");
      const unknownPath = await fetch(`${baseUrl()}/no-such-thing`, { method: "OPTIONS" });
      expect(refusal({ status: unknownPath.status, body: await unknownPath.json() })).toEqual({ status: 404, failedCode: "sys-404" });
    });
  });
});
