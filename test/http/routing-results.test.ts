import { ALWAYS_ON_SHIFT } from "#test/support/shifts";
import { SQSClient } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { appConfig } from "#shared/config/env";
import { handBack, receive } from "#test/integration/runs/run-fixtures";
import { type ApiClient, apiClient, baseUrl, newTenant, tokenFor } from "#test/support/local-api";
import { created, deliverRuns, runOnDemand } from "#test/support/on-demand-runs";
import { chromiumMissing, chromiumPath, launchChromium, testOutputPath } from "#test/support/chromium";
import { nextIdSecond } from "#test/support/id-order";
import { refusal } from "#test/support/refusals";
import { rfc7946Problems } from "#test/support/geojson-rfc7946";

/**
 * The routing results API through the local gateway. On-demand runs are queued on the stack's run
 * queue; the test hands its own messages to the run worker (the test stack runs no poller).
 */
const sqs = new SQSClient({});

async function tenantWithPlan(options: { visits?: number; claims?: Record<string, unknown> } = {}) {
  const tenant = newTenant(options.claims);
  const hub = await created(tenant.api, "/hub", { name: "Depot", address: "Jl. Depot 1", lat: -6.2, lng: 106.8 });
  const vehicles = [];
  for (const name of ["Van 1", "Van 2"]) {
    vehicles.push(await created(tenant.api, "/vehicle", { name, hubId: hub._id, workingTime: ALWAYS_ON_SHIFT }));
  }
  const visits = [];
  for (let i = 0; i < (options.visits ?? 3); i++) {
    visits.push(
      await created(tenant.api, "/visit", { hubId: hub._id, name: `Stop ${i + 1}`, coordinate: `${-6.2 + 0.01 * (i + 1)},106.8` }),
    );
  }
  const profile = await created(tenant.api, "/routing/configuration", { name: "Plan", hubId: hub._id, timeLimitSeconds: 1 });
  return { ...tenant, hub, vehicles, visits, profile };
}

const runQueued = (...resultIds: string[]) => deliverRuns(resultIds);
const doneResult = (tenant: { api: ApiClient; profile: { _id: string } }) => runOnDemand(tenant.api, tenant.profile._id);

const fields = (response: { body: { errors?: Array<{ field: string }> } }) => (response.body.errors ?? []).map((e) => e.field);

describe("Routing results", () => {
  describe("POST /routing/result (on-demand run)", () => {
    it("creates an ongoing API result, queues the run, and the worker makes it done with routes and a summary", async () => {
      const tenant = await tenantWithPlan();
      const created = await tenant.api.post("/routing/result", { configurationId: tenant.profile._id });
      expect(created.status).toBe(201);
      expect(created.body.data).toMatchObject({
        createdFrom: "API",
        status: "ongoing",
        hubId: tenant.hub._id,
        configurationId: tenant.profile._id,
        scheduleId: null,
        routes: [],
        dropped: [],
      });
      expect(created.body.data.name).toMatch(/^Plan - \d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);

      await runQueued(created.body.data._id);
      const read = await tenant.api.get(`/routing/result/${created.body.data._id}`);
      expect(read.status).toBe(200);
      const result = read.body.data;
      expect(result).toMatchObject({
        status: "done",
        message: null,
        summary: { visitsPlanned: 3, visitsAssigned: 3, visitsDropped: 0, timeZone: "UTC" },
      });
      const trips = result.routes.flatMap(
        (route: { trips: Array<{ visitId: string; order: number; eta: string; etd: string }> }) => route.trips,
      );
      expect(trips.map((trip: { visitId: string }) => trip.visitId).sort()).toEqual(tenant.visits.map((v) => v._id).sort());
      for (const trip of trips) {
        expect(trip.eta <= trip.etd).toBe(true);
        expect(trip.eta).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
      }
      // Planning only: the visits stay unassigned until dispatched.
      for (const visit of tenant.visits) expect((await tenant.api.get(`/visit/${visit._id}`)).body.data.status).toBe("UNASSIGNED");
    });

    it("takes a name; a hub without active visits ends failed with the reason", async () => {
      const tenant = await tenantWithPlan({ visits: 0 });
      const run = await created(tenant.api, "/routing/result", { configurationId: tenant.profile._id, name: "Friday run" });
      expect(run.name).toBe("Friday run");
      await runQueued(run._id);
      expect((await tenant.api.get(`/routing/result/${run._id}`)).body.data).toMatchObject({
        status: "failed",
        message: expect.stringContaining("No active"),
        routes: [],
      });
    });

    it.each([
      ["missing configurationId", {}, "configurationId"],
      ["blank configurationId", { configurationId: " " }, "configurationId"],
      ["unknown configurationId", { configurationId: "0123456789abcdef01234567" }, "configurationId"],
      ["blank name", { configurationId: "x", name: "" }, "name"],
      ["unknown field", { configurationId: "x", hubId: "h" }, "hubId"],
    ])("rejects %s with 400 naming the field and stores nothing", async (_, body, field) => {
      const tenant = newTenant();
      const response = await tenant.api.post("/routing/result", body);
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(response)).toContain(field);
      expect((await tenant.api.get("/routing/results")).body.data).toEqual([]);
    });

    it("rejects another organization's profile (400) and a profile of a hub the token does not allow", async () => {
      const owner = await tenantWithPlan({ visits: 0 });
      const other = newTenant();
      const foreign = await other.api.post("/routing/result", { configurationId: owner.profile._id });
      expect(refusal(foreign)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(foreign)).toEqual(["configurationId"]);
      expect((await other.api.get("/routing/results")).body.data).toEqual([]);
      const restricted = apiClient(tokenFor({ organizationId: owner.organizationId, hubIds: ["another-hub"] }));
      expect(refusal(await restricted.post("/routing/result", { configurationId: owner.profile._id }))).toEqual({
        status: 400,
        failedCode: "sys-400",
      });
      expect((await owner.api.get("/routing/results")).body.data).toEqual([]);
    });
  });

  describe("cap on an organization's active runs (MAX_ACTIVE_RUNS_PER_ORG, default 5)", () => {
    /** This organization's run messages in the queue now (every message is handed back at once: run-fixtures handBack). */
    async function queuedRunsOf(organizationId: string): Promise<string[]> {
      const queueUrl = appConfig().RUN_QUEUE_URL;
      const seen = new Set<string>();
      for (let attempt = 0; attempt < 5; attempt++) {
        for (const message of await receive(sqs, queueUrl)) {
          const body = JSON.parse(message.Body as string);
          if (body.organizationId === organizationId) seen.add(body.resultId);
          await handBack(sqs, queueUrl, message);
        }
      }
      return [...seen];
    }

    it("the 6th concurrent on-demand run answers 429 run-429 and creates and queues nothing; a finished run frees its slot", async () => {
      const tenant = await tenantWithPlan();
      const responses = await Promise.all(
        Array.from({ length: 6 }, (_, i) => tenant.api.post("/routing/result", { configurationId: tenant.profile._id, name: `run ${i}` })),
      );
      expect(responses.map((response) => response.status).sort(), JSON.stringify(responses.map((response) => response.body))).toEqual([
        201, 201, 201, 201, 201, 429,
      ]);
      const accepted = responses.filter((response) => response.status === 201);
      const refused = responses.filter((response) => response.status === 429);
      expect(accepted).toHaveLength(5);
      expect(refused).toHaveLength(1);
      expect(refused[0]?.body).toMatchObject({
        status: false,
        failedCode: "run-429",
        message: expect.stringContaining("5 routing runs queued or running"),
      });

      const acceptedIds = accepted.map((response) => response.body.data._id as string).sort();
      expect((await tenant.api.get("/routing/results")).body.data.map((r: { _id: string }) => r._id).sort()).toEqual(acceptedIds);

      // Another organization is not affected by this one's cap.
      const other = await tenantWithPlan({ visits: 0 });
      expect(refusal(await tenant.api.post("/routing/result", { configurationId: tenant.profile._id }))).toEqual({
        status: 429,
        failedCode: "run-429",
      });
      const otherRun = await other.api.post("/routing/result", { configurationId: other.profile._id });
      expect(otherRun.status).toBe(201);

      // The five accepted runs were queued, and nothing else of this organization: the refused one queued nothing.
      await runQueued(...acceptedIds, otherRun.body.data._id);
      expect(await queuedRunsOf(tenant.organizationId)).toEqual([]);

      // Finished runs freed their slots: the organization may run again.
      const again = await tenant.api.post("/routing/result", { configurationId: tenant.profile._id });
      expect(again.status).toBe(201);
      await runQueued(again.body.data._id); // leave the queue clean
    });
  });

  describe("GET /routing/results and /routing/result/{id}", () => {
    it("lists newest first, filters by hubId and createdFrom, pages with a cursor, and hides other organizations' results", async () => {
      const tenant = await tenantWithPlan({ visits: 0 });
      const first = await created(tenant.api, "/routing/result", { configurationId: tenant.profile._id, name: "first" });
      await nextIdSecond();
      const second = await created(tenant.api, "/routing/result", { configurationId: tenant.profile._id, name: "second" });
      await nextIdSecond();
      const secondHub = await created(tenant.api, "/hub", { name: "Other", address: "x", lat: 1, lng: 1 });
      const otherProfile = await created(tenant.api, "/routing/configuration", { name: "Other plan", hubId: secondHub._id });
      const third = await created(tenant.api, "/routing/result", { configurationId: otherProfile._id, name: "third" });

      const names = async (query: string) =>
        (await tenant.api.get(`/routing/results${query}`)).body.data.map((r: { name: string }) => r.name);
      expect(await names("")).toEqual(["third", "second", "first"]);
      expect(await names(`?hubId=${tenant.hub._id}`)).toEqual(["second", "first"]);
      expect(await names("?createdFrom=API")).toEqual(["third", "second", "first"]);
      expect(await names("?createdFrom=SCHEDULER")).toEqual([]);

      const page = await tenant.api.get("/routing/results?limit=2");
      expect(page.body.data.map((r: { _id: string }) => r._id)).toEqual([third._id, second._id]);
      const next = await tenant.api.get(`/routing/results?limit=2&cursor=${page.body.nextCursor}`);
      expect(next.body).toMatchObject({ nextCursor: null });
      expect(next.body.data.map((r: { _id: string }) => r._id)).toEqual([first._id]);
      expect(page.body.data[0]).not.toHaveProperty("routes");

      const other = newTenant();
      expect((await other.api.get("/routing/results")).body.data).toEqual([]);
      expect(refusal(await other.api.get(`/routing/result/${first._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await other.api.get(`/routing/results?limit=2&cursor=${page.body.nextCursor}`))).toEqual({
        status: 400,
        failedCode: "sys-400",
      });
      const restricted = apiClient(tokenFor({ organizationId: tenant.organizationId, hubIds: [secondHub._id] }));
      expect((await restricted.get("/routing/results")).body.data.map((r: { name: string }) => r.name)).toEqual(["third"]);
      expect(refusal(await restricted.get(`/routing/result/${first._id}`))).toEqual({ status: 404, failedCode: "sys-404" });
      expect(refusal(await restricted.get(`/routing/results?hubId=${tenant.hub._id}`))).toEqual({ status: 400, failedCode: "sys-400" });
      await runQueued(first._id, second._id, third._id); // leave the queue clean
    });

    it.each([
      ["createdFrom", "?createdFrom=MANUAL"],
      ["limit", "?limit=0"],
      ["cursor", "?cursor=not-a-cursor"],
      ["foo", "?foo=1"],
    ])("rejects an invalid %s with 400", async (field, query) => {
      const response = await newTenant().api.get(`/routing/results${query}`);
      expect(refusal(response)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(response)).toContain(field);
    });

    it("answers 404 for an unknown result", async () => {
      expect(refusal(await newTenant().api.get("/routing/result/0123456789abcdef01234567"))).toEqual({
        status: 404,
        failedCode: "sys-404",
      });
    });
  });

  describe("POST /routing/result/{id}/dispatch", () => {
    it("assigns the result's visits (vehicle, order, eta/etd, result id); a second dispatch counts the visits it assigned already as dispatched", async () => {
      const tenant = await tenantWithPlan();
      const result = await doneResult(tenant);
      const dispatched = await tenant.api.post(`/routing/result/${result._id}/dispatch`);
      expect(dispatched.status).toBe(200);
      expect(dispatched.body.data).toEqual({ success: 3, failed: 0 });

      for (const route of result.routes) {
        for (const trip of route.trips) {
          expect((await tenant.api.get(`/visit/${trip.visitId}`)).body.data).toMatchObject({
            status: "ASSIGNED",
            assignedVehicleId: route.vehicleId,
            routePlannedOrder: trip.order,
            eta: trip.eta,
            etd: trip.etd,
            routingResultId: result._id,
          });
        }
      }
      expect((await tenant.api.get(`/routing/result/${result._id}`)).body.data.dispatch).toMatchObject({ success: 3, failed: 0 });
      expect((await tenant.api.post(`/routing/result/${result._id}/dispatch`)).body.data).toEqual({ success: 3, failed: 0 });
    });

    it("dispatches only the named vehicles; a visit no longer active is left alone and counted failed", async () => {
      const tenant = await tenantWithPlan();
      const result = await doneResult(tenant);
      const [route] = result.routes;
      const [firstTrip] = route.trips;
      await tenant.api.patch(`/visit/${firstTrip.visitId}`, { status: "CANCELLED" });
      const response = await tenant.api.post(`/routing/result/${result._id}/dispatch?vehicleIds=${route.vehicleId}`);
      expect(response.body.data).toEqual({ success: route.trips.length - 1, failed: 1 });
      expect((await tenant.api.get(`/visit/${firstTrip.visitId}`)).body.data.status).toBe("CANCELLED");
    });

    it("rejects a vehicle not on the result (400), a result not done (409), another organization's result (404)", async () => {
      const tenant = await tenantWithPlan();
      const result = await doneResult(tenant);
      const unknown = await tenant.api.post(`/routing/result/${result._id}/dispatch?vehicleIds=nope`);
      expect(refusal(unknown)).toEqual({ status: 400, failedCode: "sys-400" });
      expect(fields(unknown)).toEqual(["vehicleIds"]);
      const ongoing = await created(tenant.api, "/routing/result", { configurationId: tenant.profile._id });
      expect(refusal(await tenant.api.post(`/routing/result/${ongoing._id}/dispatch`))).toEqual({ status: 409, failedCode: "sys-409" });
      expect(refusal(await newTenant().api.post(`/routing/result/${result._id}/dispatch`))).toEqual({ status: 404, failedCode: "sys-404" });
      for (const visit of tenant.visits) expect((await tenant.api.get(`/visit/${visit._id}`)).body.data.status).toBe("UNASSIGNED");
      await runQueued(ongoing._id); // leave the queue clean
    });
  });

  it.each([
    ["GET", "/routing/results"],
    ["GET", "/routing/result/0123456789abcdef01234567"],
    ["POST", "/routing/result"],
    ["POST", "/routing/result/0123456789abcdef01234567/dispatch"],
  ])("%s %s without a token is 401", async (method, path) => {
    expect(refusal(await apiClient(undefined).request(method, path, method === "POST" ? { body: {} } : {}))).toEqual({
      status: 401,
      failedCode: "sys-401",
    });
  });
});

/** The pictures of a result: GET /routing/result/{id}/map.svg and GET /routing/result/{id}?format=geojson. */
describe("Routing result map (SVG) and GeoJSON", () => {
  type Trip = { visitId: string; order: number; eta: string; etd: string; coordinate: { lat: number; lng: number } };
  type Route = { vehicleId: string; trips: Trip[] };
  // GeoJSON positions carry at most 6 decimals (RFC 7946 §11.2); stored coordinates may carry float noise.
  const lngLat = ({ lat, lng }: { lat: number; lng: number }) => [Math.round(lng * 1e6) / 1e6, Math.round(lat * 1e6) / 1e6];

  /** A done result with routes and one visit no vehicle may serve (tag nobody has): unassigned, with a position. */
  async function resultWithUnassigned() {
    const tenant = await tenantWithPlan();
    const cold = await created(tenant.api, "/visit", {
      hubId: tenant.hub._id,
      name: "Cold <stop>",
      coordinate: "-6.25,106.85",
      tags: ["freezer"],
    });
    const result = await doneResult(tenant);
    expect(result.dropped.map((entry: { visitId: string }) => entry.visitId)).toEqual([cold._id]);
    return { tenant, result, cold };
  }

  it("?format=geojson answers an RFC 7946 FeatureCollection: a LineString per route from the hub, a Point per stop with eta/etd, the unassigned visit", async () => {
    const { tenant, result, cold } = await resultWithUnassigned();
    const response = await tenant.api.get(`/routing/result/${result._id}?format=geojson`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/geo+json");
    const geojson = response.body;
    expect(rfc7946Problems(geojson)).toEqual([]);
    expect(geojson.type).toBe("FeatureCollection");
    const ofKind = (kind: string) =>
      geojson.features.filter((feature: { properties: { kind: string } }) => feature.properties.kind === kind);

    expect(ofKind("hub")).toEqual([expect.objectContaining({ geometry: { type: "Point", coordinates: [106.8, -6.2] } })]);
    const lines = ofKind("route");
    expect(lines.map((line: { properties: { vehicleId: string } }) => line.properties.vehicleId)).toEqual(
      result.routes.map((route: Route) => route.vehicleId),
    );
    for (const [index, line] of lines.entries()) {
      const route = result.routes[index] as Route;
      // [longitude, latitude]: from the hub through the stops in order.
      expect(line.geometry.coordinates.slice(0, route.trips.length + 1)).toEqual([
        [106.8, -6.2],
        ...route.trips.map((trip) => lngLat(trip.coordinate)),
      ]);
    }
    const stops = ofKind("stop").map((stop: { properties: Record<string, unknown>; geometry: unknown }) => ({
      ...stop.properties,
      geometry: stop.geometry,
    }));
    const trips = result.routes.flatMap((route: Route) =>
      route.trips.map((trip) => ({
        vehicleId: route.vehicleId,
        order: trip.order,
        visitId: trip.visitId,
        eta: trip.eta,
        etd: trip.etd,
        geometry: { type: "Point", coordinates: lngLat(trip.coordinate) },
      })),
    );
    expect(stops).toEqual(trips.map((trip: object) => expect.objectContaining(trip)));
    expect(ofKind("unassigned")).toEqual([
      expect.objectContaining({
        geometry: { type: "Point", coordinates: [106.85, -6.25] },
        properties: expect.objectContaining({ visitId: cold._id, visitName: "Cold <stop>" }),
      }),
    ]);
    // Without the query the answer is unchanged.
    expect((await tenant.api.get(`/routing/result/${result._id}`)).body).toMatchObject({ status: true, data: { _id: result._id } });
    expect(refusal(await tenant.api.get(`/routing/result/${result._id}?format=kml`))).toEqual({ status: 400, failedCode: "sys-400" });
  });

  it("map.svg answers a self-contained SVG with the same permission and visibility as reading the result", async () => {
    const { tenant, result } = await resultWithUnassigned();
    const response = await tenant.api.get(`/routing/result/${result._id}/map.svg`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/svg+xml");
    const svg = response.body as string;
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg.match(/<g class="route"/g)).toHaveLength(result.routes.length);
    expect(svg).toContain("Unassigned: Cold &lt;stop&gt; (no vehicle with matching tags)");
    expect(svg).not.toMatch(/href=|<script|<image/);

    const other = newTenant();
    expect(refusal(await other.api.get(`/routing/result/${result._id}/map.svg`))).toEqual({ status: 404, failedCode: "sys-404" });
    expect(refusal(await other.api.get(`/routing/result/${result._id}?format=geojson`))).toEqual({ status: 404, failedCode: "sys-404" });
    const withoutPermission = apiClient(tokenFor({ organizationId: tenant.organizationId, permissions: ["view/hub"] }));
    expect((await withoutPermission.get(`/routing/result/${result._id}/map.svg`)).body).toMatchObject({
      status: false,
      failedCode: "sys-035",
    });
    expect(refusal(await apiClient(undefined).get(`/routing/result/${result._id}/map.svg`))).toEqual({
      status: 401,
      failedCode: "sys-401",
    });
  });

  it("both are in the OpenAPI document with their media types", async () => {
    const document = (await apiClient(undefined).get("/openapi.json")).body;
    expect(Object.keys(document.paths["/routing/result/{resultId}/map.svg"].get.responses["200"].content)).toEqual(["image/svg+xml"]);
    expect(Object.keys(document.paths["/routing/result/{resultId}"].get.responses["200"].content)).toEqual([
      "application/json",
      "application/geo+json",
    ]);
  });

  describe.skipIf(!chromiumPath)(chromiumPath ? "in headless Chromium" : `in headless Chromium: skipped, ${chromiumMissing}`, () => {
    it("map.svg is well-formed XML and renders (screenshot test-output/route-map.png)", async () => {
      const { tenant, result } = await resultWithUnassigned();
      const browser = await launchChromium();
      try {
        const context = await browser.newContext({
          extraHTTPHeaders: { authorization: `Bearer ${tokenFor({ organizationId: tenant.organizationId })}` },
          viewport: { width: 1000, height: 720 },
        });
        const page = await context.newPage();
        const requests: string[] = [];
        page.on("request", (request) => requests.push(request.url()));
        const url = `${baseUrl()}/routing/result/${result._id}/map.svg`;
        const response = await page.goto(url);
        expect(response?.status()).toBe(200);
        const rendered = await page.evaluate(() => {
          // Runs in the page: the browser's DOM, not Node's.
          const document = (
            globalThis as unknown as {
              document: {
                documentElement: { localName: string; getBoundingClientRect(): { width: number } };
                getElementsByTagName(name: string): { length: number };
                querySelectorAll(selector: string): { length: number };
                querySelector(selector: string): { textContent: string | null } | null;
              };
            }
          ).document;
          return {
            table: document.querySelector("#stop-table")?.textContent ?? "",
            root: document.documentElement.localName,
            parseErrors: document.getElementsByTagName("parsererror").length,
            routes: document.querySelectorAll("g.route").length,
            stops: document.querySelectorAll("g.stop").length,
            width: document.documentElement.getBoundingClientRect().width,
          };
        });
        const { table, ...drawn } = rendered;
        expect(drawn).toEqual({ root: "svg", parseErrors: 0, routes: result.routes.length, stops: 3, width: 1000 });
        // The printed stop table: every stop's name and ETA, in the rendered page itself (not a tooltip).
        for (const trip of result.routes.flatMap((route: { trips: { visitName: string; eta: string }[] }) => route.trips)) {
          expect(table).toContain(trip.visitName);
          expect(table).toContain(trip.eta);
        }
        expect(requests).toEqual([url]);
        await page.screenshot({ path: testOutputPath("route-map.png") });
      } finally {
        await browser.close();
      }
    });
  });
});
