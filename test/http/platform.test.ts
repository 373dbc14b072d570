import { describe, expect, it } from "vitest";
import { routes } from "#functions/routes";
import { apiClient, newTenant } from "#test/support/local-api";

describe("HTTP platform behaviour through the local gateway", () => {
  it("answers malformed JSON with 400, not 500", async () => {
    const { api } = newTenant();
    const response = await api.request("POST", "/vehicle", { rawBody: "{not json", headers: { "content-type": "application/json" } });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: false, message: "Bad request - invalid parameters provided.", failedCode: "sys-400" });
    expect(response.body.errors).toEqual([{ field: "body", message: "body is not valid JSON" }]);
  });

  it("answers a non-JSON content type with 415", async () => {
    const { api } = newTenant();
    const response = await api.request("POST", "/vehicle", { rawBody: "name=x", headers: { "content-type": "text/plain" } });
    expect(response.status).toBe(415);
    expect(response.body).toMatchObject({ status: false, failedCode: "sys-415" });
  });

  it("answers an empty body with 400", async () => {
    const { api } = newTenant();
    const response = await api.request("POST", "/vehicle", { headers: { "content-type": "application/json" } });
    expect(response.status).toBe(400);
  });

  it("answers an oversized JSON body with 413", async () => {
    const { api } = newTenant();
    const response = await api.request("POST", "/vehicle", {
      rawBody: JSON.stringify({ name: "x".repeat(1024 * 1024 + 10), hubId: "h" }),
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(413);
    expect(response.body).toMatchObject({ status: false, failedCode: "sys-413" });
  });

  it("answers an unknown route with 404 and a wrong method with 405", async () => {
    const { api } = newTenant();
    expect((await api.get("/no-such-thing")).status).toBe(404);
    expect((await api.request("PATCH", "/vehicles")).status).toBe(405);
  });

  it("answers 401 on every authenticated route of the route table when the token is missing", async () => {
    const anonymous = apiClient(undefined);
    for (const route of routes.filter((r) => r.auth !== "none")) {
      const path = route.path.replace(/\{\w+\}/g, "0123456789abcdef01234567");
      const response = await anonymous.request(route.method, path, route.method === "GET" || route.method === "DELETE" ? {} : { body: {} });
      expect(response.status, `${route.method} ${route.path}`).toBe(401);
      expect(response.body.status, `${route.method} ${route.path}`).toBe(false);
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
    expect(createVehicle.requestBody.content["application/json"].schema.required).toEqual(expect.arrayContaining(["name", "hubId"]));
  });
});
