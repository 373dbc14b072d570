import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { permissionSlugs, routes } from "#functions/routes";
import type { RouteDefinition } from "#shared/http/route";
import { selfSignedCertificate } from "#test/fixtures/app-integrations/self-signed-certificate";
import { postExport } from "#test/support/export-upload";
import { type ApiClient, type ApiResponse, apiClient, newOrganizationId, tokenFor } from "#test/support/local-api";
import { validWeeklySchedule } from "#test/unit/schedules/fixtures";
import { refusal } from "#test/support/refusals";

/**
 * The standing tenancy check: EVERY route of the route table × four callers that must not reach
 * organization A's resources (created once, one of each, on hub A):
 * - no token → 401;
 * - a token of organization A lacking only the route's permission → 403 sys-035;
 * - a token of another organization, sending A's ids → 404 (400 for a write whose body names one of A's ids);
 * - a token of organization A limited to hub B, on hub A's resources → 404 (400 for a write that
 *   names hub A; 403 for creating a hub) — for the hub-scoped modules only (data types and app
 *   integrations belong to the whole organization).
 * No answer may carry A's data (a marker in every fixture's name, A's organization id).
 * Path parameters come from `fixtureParams` by name and request bodies from `bodies` by
 * operationId: a new route whose parameter or body has no fixture fails here until one is added.
 */
const marker = `tenantA${randomUUID().slice(0, 8)}`;
const guardedRoutes = routes.filter((route) => route.auth !== "none");
const hubScopedModules = new Set([
  "vehicle",
  "hub",
  "visit",
  "visit-progress",
  "vehicle-position",
  "routing-configuration",
  "routing-schedule",
  "routing-result",
  "data",
]);
const moduleOf = (route: RouteDefinition) => (route.permission as string).split("/")[1] as string;
const isCreate = (route: RouteDefinition) => route.method === "POST" && !route.path.includes("{");
const isReadOrDelete = (route: RouteDefinition) => route.method === "GET" || route.method === "DELETE";
const isList = (route: RouteDefinition) => route.method === "GET" && !route.path.includes("{");

type Fixtures = {
  organizationId: string;
  params: Record<string, string>;
  hubA: string;
  hubB: string;
  typeId: string;
  configurationId: string;
  uploadId: string;
};
type Body = { json: unknown } | { form: Array<[string, string | { filename: string; content: string }]> };

/** Request bodies by operationId, built from the fixtures; valid for organization A itself. */
const bodies: Record<string, (fixtures: Fixtures) => Body> = {
  createVehicle: (f) => ({ json: { name: `${marker} van 2`, hubId: f.hubA } }),
  replaceVehicle: (f) => ({ json: { name: `${marker} van`, hubId: f.hubA } }),
  patchVehicle: () => ({ json: { name: "renamed" } }),
  createRoutingSchedule: (f) => ({ json: { ...validWeeklySchedule, name: `${marker} s2`, configurationId: f.configurationId } }),
  replaceRoutingSchedule: (f) => ({ json: { ...validWeeklySchedule, name: `${marker} s`, configurationId: f.configurationId } }),
  patchRoutingSchedule: () => ({ json: { name: "renamed" } }),
  createAppIntegration: () => ({ form: integrationForm() }),
  updateAppIntegration: () => ({ form: [["azureAuthUrl", "https://login.microsoftonline.com/other/saml2"]] }),
  createDataType: () => ({ json: { name: `${marker} type 2`, fields: [{ type: "title", title: "Name" }] } }),
  replaceDataType: () => ({ json: { name: `${marker} type`, fields: [{ type: "title", title: "Name" }] } }),
  patchDataType: () => ({ json: { name: "renamed type" } }),
  createRecord: (f) => ({ json: { dataTypeId: f.typeId, hubId: f.hubA, dataId: `${marker}-2` } }),
  replaceRecord: (f) => ({ json: { hubId: f.hubA, dataId: `${marker}-1` } }),
  patchRecord: () => ({ json: { dataId: `${marker}-3` } }),
  createHub: () => ({ json: { name: `${marker} hub 3`, address: "Street 3", lat: -6.2, lng: 106.8 } }),
  replaceHub: () => ({ json: { name: `${marker} hub`, address: "Street 1", lat: -6.2, lng: 106.8 } }),
  patchHub: () => ({ json: { name: "renamed hub" } }),
  createVisit: (f) => ({ json: { name: `${marker} stop 2`, hubId: f.hubA, coordinate: "-6.2,106.8" } }),
  patchVisit: () => ({ json: { name: "renamed stop" } }),
  createVisitBatch: (f) => ({ json: { visits: [{ name: `${marker} stop 3`, hubId: f.hubA, coordinate: "-6.2,106.8" }] } }),
  reportVisitProgress: () => ({ json: { action: "start" } }),
  createVisitProofUpload: () => ({ json: { kind: "photo", contentType: "image/jpeg", sizeBytes: 1000 } }),
  addVehiclePositions: () => ({ json: { positions: [{ at: new Date().toISOString(), lat: -6.2, lng: 106.8 }] } }),
  createRoutingConfiguration: (f) => ({ json: { name: `${marker} plan 2`, hubId: f.hubA } }),
  replaceRoutingConfiguration: (f) => ({ json: { name: `${marker} plan`, hubId: f.hubA } }),
  patchRoutingConfiguration: () => ({ json: { name: "renamed plan" } }),
  createRoutingResult: (f) => ({ json: { configurationId: f.configurationId } }),
  reoptimizeRoutingResult: () => ({ json: { name: `${marker} re-plan` } }),
  replaceExtensionValues: () => ({ json: { custom: { badge: `${marker}-badge-2` } } }),
  importDataType: (f) => ({ json: { mode: "copy", source: { uploadId: f.uploadId } } }),
  createWebhook: () => ({
    json: { url: "https://hooks.example.com/field-operations", events: ["routing.result.completed"], description: `${marker} hook 2` },
  }),
  patchWebhook: () => ({ json: { description: "renamed hook" } }),
};
/** Query strings lists need to name organization A's resource. */
const queries: Record<string, (fixtures: Fixtures) => string> = {
  listRecords: (f) => `?dataTypeId=${f.typeId}`,
};
/** Query strings a route requires that name no resource of organization A (the caller's own answer is 200). */
const requiredQueries: Record<string, () => string> = {
  getUsage: () => "?from=2026-01-01&to=2026-01-31",
};
/** Creates that name no resource: for another organization they are its own creates, not a tenancy question. */
const createsNamingNothing = new Set([
  "createAppIntegration",
  "createDataType",
  "createHub",
  "createDataTypeImportUpload",
  "createWebhook",
]);
/**
 * Batches answer 200 with one result per item, each what the single create would have answered:
 * a refused item is that item's 400/404, and the call creates nothing of A's.
 */
const batches = new Set(["createVisitBatch"]);
const expectEveryItemRefused = (response: ApiResponse) => {
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  const items = response.body.data as Array<{ status: number; data?: unknown; error?: unknown }>;
  expect(items.length).toBeGreaterThan(0);
  for (const item of items) {
    expect([400, 404], JSON.stringify(item)).toContain(item.status);
    expect(item).not.toHaveProperty("data");
    expect(item.error).toMatchObject({ status: false, failedCode: item.status === 400 ? "sys-400" : "sys-404" });
  }
};
/** A write naming A's ids: a 400 naming the field (sys-400), or a 404 (sys-404) for A's resource in its path. */
const expectWriteRefused = (response: ApiResponse) => {
  expect([400, 404], JSON.stringify(response.body)).toContain(response.status);
  expect(refusal(response)).toEqual({ status: response.status, failedCode: response.status === 400 ? "sys-400" : "sys-404" });
};

function integrationForm(): Array<[string, string | { filename: string; content: string }]> {
  return [
    ["integrationType", "azure"],
    ["azureAuthUrl", "https://login.microsoftonline.com/0f1e2d3c-tenant/saml2"],
    ["azureCert", { filename: "sso.pem", content: selfSignedCertificate().pem }],
  ];
}

async function send(api: ApiClient, route: RouteDefinition, fixtures: Fixtures): Promise<ApiResponse> {
  const path =
    route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = fixtures.params[name];
      if (value === undefined)
        throw new Error(`no fixture for path parameter {${name}} of ${route.operationId}: add one to the tenancy matrix`);
      return encodeURIComponent(value);
    }) + (queries[route.operationId]?.(fixtures) ?? requiredQueries[route.operationId]?.() ?? "");
  if (!route.body) return api.request(route.method, path);
  const makeBody = bodies[route.operationId];
  if (!makeBody) throw new Error(`no request body for ${route.operationId}: add one to the tenancy matrix`);
  const body = makeBody(fixtures);
  if ("json" in body) return api.request(route.method, path, { body: body.json });
  return api.request(route.method, path, await multipartBody(body.form));
}

/** A multipart body as the platform's FormData encodes it. */
async function multipartBody(parts: Array<[string, string | { filename: string; content: string }]>) {
  const form = new FormData();
  for (const [name, value] of parts) {
    if (typeof value === "string") form.set(name, value);
    else form.set(name, new Blob([value.content]), value.filename);
  }
  const request = new Request("http://form.invalid/", { method: "POST", body: form });
  return {
    rawBody: new Uint8Array(await request.arrayBuffer()),
    headers: { "content-type": request.headers.get("content-type") as string },
  };
}

async function created(api: ApiClient, path: string, body: unknown): Promise<Record<string, any>> {
  const response = await api.post(path, body);
  if (response.status !== 201) throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body.data ?? response.body.data_type;
}

const expectNoTenantData = (response: ApiResponse, fixtures: Fixtures) => {
  const text = JSON.stringify(response.body) ?? "";
  expect(text).not.toContain(marker);
  expect(text).not.toContain(fixtures.organizationId);
};

describe("Tenancy matrix: every route × callers that must not reach organization A", () => {
  let fixtures: Fixtures;
  let owner: ApiClient;

  beforeAll(async () => {
    const organizationId = newOrganizationId();
    owner = apiClient(tokenFor({ organizationId }));
    const hubA = await created(owner, "/hub", { name: `${marker} hub A`, address: "Street 1", lat: -6.2, lng: 106.8 });
    const hubB = await created(owner, "/hub", { name: "hub B", address: "Street 2", lat: -6.2, lng: 106.8 });
    const vehicle = await created(owner, "/vehicle", { name: `${marker} van`, hubId: hubA._id });
    const visit = await created(owner, "/visit", { name: `${marker} stop`, hubId: hubA._id, coordinate: "-6.2,106.8" });
    const configuration = await created(owner, "/routing/configuration", { name: `${marker} plan`, hubId: hubA._id });
    const schedule = await created(owner, "/routing/schedule", {
      ...validWeeklySchedule,
      name: `${marker} s`,
      configurationId: configuration._id,
    });
    const result = await created(owner, "/routing/result", { configurationId: configuration._id });
    const dataType = await created(owner, "/data-type", { name: `${marker} type`, fields: [{ type: "title", title: "Name" }] });
    const record = await created(owner, "/data", { dataTypeId: dataType._id, hubId: hubA._id, dataId: `${marker}-1` });
    await created(owner, "/data-type", {
      name: `${marker} user extras`,
      extends: { entity: "user" },
      fields: [{ id: "badge", title: "Badge", type: "text", required: false }],
    });
    expect((await owner.put("/extension/user/user-a1", { custom: { badge: `${marker}-badge` } })).status).toBe(200);
    const integration = await owner.request("POST", "/app-integration", await multipartBody(integrationForm()));
    expect(integration.status).toBe(201);
    // An export of the earlier version uploaded by A (docs/api/legacy-import.md): another organization's import of it names nothing.
    const upload = await owner.post("/data-type/import/upload", undefined);
    const header = {
      format: "field-operations-export",
      formatVersion: 2,
      dataType: { name: `${marker} legacy`, fields: [{ type: "title", title: "Name" }] },
      recordCount: 0,
    };
    expect((await postExport(upload.body.data, JSON.stringify(header))).status).toBe(204);
    const webhook = await created(owner, "/webhook", {
      url: "https://hooks.example.com/field-operations",
      events: ["routing.result.completed"],
      description: `${marker} hook`,
    });
    fixtures = {
      uploadId: upload.body.data.uploadId,
      organizationId,
      hubA: hubA._id,
      hubB: hubB._id,
      typeId: dataType._id,
      configurationId: configuration._id,
      params: {
        vehicleId: vehicle._id,
        hubId: hubA._id,
        visitId: visit._id,
        configurationId: configuration._id,
        scheduleId: schedule._id,
        resultId: result._id,
        dataTypeId: dataType._id,
        dataTypeName: dataType.name,
        dataId: record.dataId,
        appIntegrationId: integration.body.data._id,
        entity: "user",
        entityId: "user-a1",
        webhookId: webhook._id,
      },
    };
    expect(record.dataId).toBe(`${marker}-1`);
  }, 120_000);

  const cases = guardedRoutes.map((route) => [`${route.method} ${route.path}`, route] as const);

  it("covers every route but the public OpenAPI document and its page", () => {
    expect(routes.filter((route) => route.auth === "none").map((route) => route.path)).toEqual(["/openapi.json", "/docs"]);
    expect(cases.length).toBe(routes.length - 2);
  });

  it.each(cases)("%s without a token → 401", async (_name, route) => {
    const response = await send(apiClient(undefined), route, fixtures);
    expect(refusal(response)).toEqual({ status: 401, failedCode: "sys-401" });
    expectNoTenantData(response, fixtures);
  });

  it.each(cases)("%s without its permission → 403 sys-035", async (_name, route) => {
    const withoutIt = apiClient(
      tokenFor({ organizationId: fixtures.organizationId, permissions: permissionSlugs.filter((slug) => slug !== route.permission) }),
    );
    const response = await send(withoutIt, route, fixtures);
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ status: false, failedCode: "sys-035" });
    expectNoTenantData(response, fixtures);
  });

  it.each(cases)("%s by another organization with A's ids → 404 (400 for a write naming them)", async (_name, route) => {
    const other = apiClient(tokenFor({ organizationId: newOrganizationId() }));
    const response = await send(other, route, fixtures);
    if (isCreate(route) && createsNamingNothing.has(route.operationId)) {
      // its own create, echoing its own body
      expect(response.status).toBe(201);
      expect(JSON.stringify(response.body)).not.toContain(fixtures.organizationId);
      return;
    }
    expectNoTenantData(response, fixtures);
    if (isList(route)) {
      // a list names no id of A (except a data type in the query): it answers the caller's own, empty list
      if (queries[route.operationId]) expect(refusal(response)).toEqual({ status: 404, failedCode: "sys-404" });
      else expect(response.status).toBe(200);
      return;
    }
    if (batches.has(route.operationId)) return expectEveryItemRefused(response);
    if (isReadOrDelete(route)) expect(refusal(response)).toEqual({ status: 404, failedCode: "sys-404" });
    else expectWriteRefused(response);
  });

  it.each(cases.filter(([, route]) => hubScopedModules.has(moduleOf(route))))(
    "%s by a token of A limited to hub B, on hub A's resource → 404 (400 naming hub A, 403 creating a hub)",
    async (_name, route) => {
      const limited = apiClient(tokenFor({ organizationId: fixtures.organizationId, hubIds: [fixtures.hubB] }));
      const response = await send(limited, route, fixtures);
      const text = JSON.stringify(response.body) ?? "";
      expect(text).not.toContain(marker);
      if (isList(route)) {
        expect(response.status).toBe(200);
        return;
      }
      if (batches.has(route.operationId)) return expectEveryItemRefused(response);
      if (route.operationId === "createHub") expect(refusal(response)).toEqual({ status: 403, failedCode: "hub-403" });
      else if (isReadOrDelete(route)) expect(refusal(response)).toEqual({ status: 404, failedCode: "sys-404" });
      else expectWriteRefused(response);
    },
  );

  it("left organization A's fixtures untouched", async () => {
    for (const path of [
      `/vehicle/${fixtures.params.vehicleId}`,
      `/hub/${fixtures.hubA}`,
      `/visit/${fixtures.params.visitId}`,
      `/routing/configuration/${fixtures.configurationId}`,
      `/routing/schedule/${fixtures.params.scheduleId}`,
      `/routing/result/${fixtures.params.resultId}`,
      `/data-type/${fixtures.typeId}`,
      `/app-integration/${fixtures.params.appIntegrationId}`,
      `/webhook/${fixtures.params.webhookId}`,
    ]) {
      const response = await owner.get(path);
      expect(response.status, path).toBe(200);
      expect(JSON.stringify(response.body), path).not.toMatch(/renamed/);
    }
    expect((await owner.get("/vehicles")).body.data).toHaveLength(1);
    expect((await owner.get("/hubs")).body.data).toHaveLength(2);
  });
});
