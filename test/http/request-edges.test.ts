import type { APIGatewayProxyEvent, Context } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { handler as listVehicles } from "#functions/http/vehicles/list";
import { permissionSlugs } from "#functions/routes";
import { authorizerContextOf } from "#shared/http/authorizer-context";
import { apiClient, newOrganizationId, newTenant, tokenFor } from "#test/support/local-api";
import { refusal } from "#test/support/refusals";

/** Edges of the HTTP contract every route shares: repeated query parameters, the text rule, ids from tokens, cached authorizations. */
describe("A repeated query parameter", () => {
  it("is a 400 naming it (lists take one comma-separated value), on a route with and without a query schema", async () => {
    const { api } = newTenant();
    const listed = await api.get("/vehicles?limit=5&limit=10");
    expect(refusal(listed)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(listed.body).toMatchObject({ status: false });
    expect(listed.body.errors).toEqual([expect.objectContaining({ field: "limit", message: expect.stringContaining("more than once") })]);

    const twoNames = await api.get("/hubs?cursor=a&cursor=b&limit=1&limit=2");
    expect(refusal(twoNames)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(twoNames.body.errors.map((issue: { field: string }) => issue.field).sort()).toEqual(["cursor", "limit"]);

    const once = await api.get("/vehicles?limit=5");
    expect(once.status).toBe(200);
  });
});

describe("The one text rule on names and ids", () => {
  const hostile = [
    ["NUL", "Depot\u0000North"],
    ["an escape sequence", "Depot \u001b[31mred"],
    ["a bidi override", "Depot \u202eevil"],
    ["a lone surrogate", "Depot \ud800"],
  ];

  it.each(hostile)("a hub, vehicle or visit name with %s is a 400 naming the field, and nothing is stored", async (_label, name) => {
    const { api } = newTenant();
    const hubResponse = await api.post("/hub", { name, address: "Main St 1", lat: 52.5, lng: 13.4 });
    expect(refusal(hubResponse)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(hubResponse.body.errors).toEqual([expect.objectContaining({ field: "name" })]);
    const hub = await api.post("/hub", { name: "Depot", address: "Main St 1", lat: 52.5, lng: 13.4 });
    const hubId = hub.body.data._id as string;
    const vehicle = await api.post("/vehicle", { name, hubId });
    expect(refusal(vehicle)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(vehicle.body.errors).toEqual([expect.objectContaining({ field: "name" })]);
    const visit = await api.post("/visit", { name, hubId, coordinate: "52.51,13.41" });
    expect(refusal(visit)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(visit.body.errors).toEqual([expect.objectContaining({ field: "name" })]);
    expect((await api.get("/hubs")).body.data).toHaveLength(1);
    expect((await api.get("/vehicles")).body.data).toEqual([]);
    expect((await api.get("/visits")).body.data).toEqual([]);
  });

  it("an extension entity id with a control character is a 400, not a stored key", async () => {
    const { api } = newTenant();
    const response = await api.get(`/extension/vehicle/${encodeURIComponent("abc\u0000def")}`);
    expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
    expect(response.body.status).toBe(false);
  });
});

describe("Ids from tokens", () => {
  it.each([
    ["a 2 KB organizationId", { organizationId: "o".repeat(2048) }],
    ["an organizationId with the key separator #", { organizationId: "acme#IDEM" }],
    ["an organizationId with a control character", { organizationId: "acme\u0000" }],
    ["a user id (sub) of 500 characters", { organizationId: "org-ok", sub: "u".repeat(500) }],
    ["a hub id with a bidi override", { organizationId: "org-ok", hubIds: ["hub\u202e1"] }],
  ])("%s is a 401, never a 500", async (_label, claims) => {
    const api = apiClient(tokenFor(claims as { organizationId: string }));
    const response = await api.get("/vehicles");
    expect(refusal(response)).toEqual({ status: 401, failedCode: "sys-401" });
    expect(response.body).toMatchObject({ status: false });
  });
});

describe("A cached authorization of an expired token", () => {
  const eventFor = (expiresAt: number) =>
    ({
      httpMethod: "GET",
      path: "/vehicles",
      headers: {},
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: null,
      body: null,
      requestContext: {
        authorizer: {
          ...authorizerContextOf({
            organizationId: newOrganizationId(),
            userId: "user-1",
            hubIds: [],
            permissions: new Set(permissionSlugs),
            permissionDetails: [],
          }),
          expiresAt: String(expiresAt),
        },
      },
    }) as unknown as APIGatewayProxyEvent;
  const context = { awsRequestId: "request-1", functionName: "listVehicles" } as Context;

  it("is refused by the function (401): API Gateway may serve it from its cache after exp", async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await listVehicles(eventFor(now - 10 * 60), context);
    expect(expired.statusCode).toBe(401);
    expect(JSON.parse(expired.body)).toMatchObject({ status: false, failedCode: "sys-401" });
    const valid = await listVehicles(eventFor(now + 10 * 60), context);
    expect(valid.statusCode).toBe(200);
  });

  it("an authorization without the token's exp is refused too", async () => {
    const event = eventFor(0);
    delete (event.requestContext.authorizer as Record<string, unknown>).expiresAt;
    expect((await listVehicles(event, context)).statusCode).toBe(401);
  });
});
