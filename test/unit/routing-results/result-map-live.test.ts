import { describe, expect, it } from "vitest";
import type { Position } from "#shared/domain/live/projection";
import { resultGeoJsonSchema, resultToGeoJson } from "#shared/domain/routing-results/geojson";
import type { ResultMapInput } from "#shared/domain/routing-results/map-input";
import { routeColour } from "#shared/domain/routing-results/map-input";
import { type LiveMap, type LiveMapPorts, loadLiveMap } from "#shared/domain/routing-results/map-live";
import { resultToSvg } from "#shared/domain/routing-results/map-svg";
import type { RoutingResult } from "#shared/domain/routing-results/schema";
import type { LiveRoute } from "#shared/domain/runs/live-day";
import type { Visit } from "#shared/domain/visits/schema";
import { rfc7946Problems } from "#test/support/geojson-rfc7946";
import { profile, vehicle, visit } from "#test/unit/runs/plan-fixtures";

/** The map and GeoJSON of a dispatched result: the day as it stands (map-live.ts), drawn by the pure renderers. */
type Trip = RoutingResult["routes"][number]["trips"][number];
const trip = (order: number, visitId: string, lat: number, lng: number): Trip => ({
  order,
  visitId,
  visitName: `Stop ${visitId}`,
  coordinate: { lat, lng },
  eta: `2026-12-01 08:${String(order * 10).padStart(2, "0")}`,
  etd: `2026-12-01 08:${String(order * 10 + 5).padStart(2, "0")}`,
  serviceStart: `2026-12-01 08:${String(order * 10).padStart(2, "0")}`,
  waitingMinutes: 0,
  distanceMeters: 1000,
  travelMinutes: 10,
  load: {},
});
const route = (vehicleId: string, trips: Trip[]): RoutingResult["routes"][number] => ({
  vehicleId,
  vehicleName: `Van ${vehicleId}`,
  departure: "2026-12-01 08:00",
  arrival: "2026-12-01 09:00",
  distanceMeters: 4000,
  durationMinutes: 60,
  travelMinutes: 40,
  waitingMinutes: 0,
  serviceMinutes: 15,
  load: {},
  breaks: [],
  trips,
});
const dispatch = { dispatchedTime: "2026-12-01 07:30:00", vehicleIds: ["A", "B"], success: 4, failed: 0 };
const result = (dispatched: boolean): RoutingResult => ({
  _id: "result-1",
  name: "Tuesday",
  hubId: "hub-1",
  configurationId: "profile-1",
  scheduleId: null,
  createdFrom: "API",
  parentResultId: null,
  status: "done",
  message: null,
  summary: {
    vehiclesUsed: 2,
    vehiclesAvailable: 2,
    visitsPlanned: 4,
    visitsAssigned: 4,
    visitsDropped: 0,
    distanceMeters: 8000,
    durationMinutes: 120,
    planningDay: "2026-12-01",
    timeZone: "UTC",
  },
  dispatch: dispatched ? dispatch : null,
  runTime: "2026-12-01 07:00:00",
  organizationId: "o",
  createdBy: "user-1",
  createdTime: "2026-12-01 07:00:00",
  updatedTime: "2026-12-01 07:00:05",
  finishedTime: "2026-12-01 07:00:05",
  routes: [
    route("A", [trip(1, "a1", -6.21, 106.81), trip(2, "a2", -6.22, 106.82), trip(3, "a3", -6.23, 106.83)]),
    route("B", [trip(1, "b1", -6.19, 106.79)]),
  ],
  dropped: [],
});
const hub = { name: "Depot", lat: -6.2, lng: 106.8 };

const live: LiveMap = {
  asOf: "2026-12-01T08:40:00.000Z",
  stops: new Map([
    ["a1", { status: "DONE", projectedEta: "2026-12-01 08:12", projectedEtd: "2026-12-01 08:18", slackMinutes: null, risk: null }],
    ["a2", { status: "FAILED", projectedEta: "2026-12-01 08:25", projectedEtd: "2026-12-01 08:30", slackMinutes: null, risk: null }],
    ["a3", { status: "EN_ROUTE", projectedEta: "2026-12-01 08:52", projectedEtd: "2026-12-01 08:57", slackMinutes: -4, risk: "LATE" }],
    ["b1", { status: "ASSIGNED", projectedEta: "2026-12-01 08:10", projectedEtd: "2026-12-01 08:15", slackMinutes: 300, risk: "ON_TIME" }],
  ]),
  vehicles: new Map([
    ["A", { vehicleId: "A", lat: -6.225, lng: 106.825, at: "2026-12-01T08:38:00.000Z", ageMinutes: 2, fresh: true, currentVisitId: "a3" }],
    [
      "B",
      { vehicleId: "B", lat: -6.195, lng: 106.795, at: "2026-12-01T08:20:00.000Z", ageMinutes: 20, fresh: false, currentVisitId: "b1" },
    ],
  ]),
};
const dispatchedInput: ResultMapInput = { result: result(true), hub, droppedPositions: new Map(), live };
const plannedInput: ResultMapInput = { result: result(false), hub, droppedPositions: new Map() };

describe("GeoJSON of a dispatched result", () => {
  const geojson = resultToGeoJson(dispatchedInput);

  it("stays a valid RFC 7946 FeatureCollection that matches the documented schema", () => {
    expect(rfc7946Problems(geojson)).toEqual([]);
    expect(resultGeoJsonSchema.safeParse(geojson).success).toBe(true);
  });

  it("gives each stop its live status, projected ETA and risk beside the planned eta", () => {
    const stops = geojson.features.filter((feature) => feature.properties.kind === "stop").map((feature) => feature.properties);
    expect(stops).toEqual([
      expect.objectContaining({ visitId: "a1", eta: "2026-12-01 08:10", status: "DONE", projectedEta: "2026-12-01 08:12", risk: null }),
      expect.objectContaining({ visitId: "a2", status: "FAILED", projectedEtd: "2026-12-01 08:30" }),
      expect.objectContaining({
        visitId: "a3",
        eta: "2026-12-01 08:30",
        status: "EN_ROUTE",
        projectedEta: "2026-12-01 08:52",
        slackMinutes: -4,
        risk: "LATE",
      }),
      expect.objectContaining({ visitId: "b1", status: "ASSIGNED", risk: "ON_TIME" }),
    ]);
  });

  it("has one Point per vehicle at its latest position, in its route's colour, saying how fresh it is", () => {
    const vehicles = geojson.features.filter((feature) => feature.properties.kind === "vehicle");
    expect(vehicles.map((feature) => [feature.geometry, feature.properties])).toEqual([
      [
        { type: "Point", coordinates: [106.825, -6.225] },
        {
          kind: "vehicle",
          vehicleId: "A",
          vehicleName: "Van A",
          at: "2026-12-01T08:38:00.000Z",
          ageMinutes: 2,
          fresh: true,
          currentVisitId: "a3",
          "marker-color": routeColour(0),
        },
      ],
      [
        { type: "Point", coordinates: [106.795, -6.195] },
        expect.objectContaining({ vehicleId: "B", fresh: false, ageMinutes: 20, "marker-color": routeColour(1) }),
      ],
    ]);
  });

  it("names a stop whose visit the live read did not find DELETED, with nothing projected", () => {
    const stops = new Map(live.stops);
    stops.delete("b1");
    const features = resultToGeoJson({ ...dispatchedInput, live: { ...live, stops } }).features;
    expect(features.find((feature) => feature.properties.kind === "stop" && feature.properties.visitId === "b1")?.properties).toMatchObject(
      {
        status: "DELETED",
        projectedEta: null,
        risk: null,
      },
    );
  });
});

describe("GeoJSON and SVG of a result not dispatched", () => {
  it("carry no live property, no vehicle position and no projected column: the map as planned", () => {
    const geojson = resultToGeoJson(plannedInput);
    expect(geojson.features.some((feature) => feature.properties.kind === "vehicle")).toBe(false);
    for (const feature of geojson.features.filter((feature) => feature.properties.kind === "stop")) {
      expect(Object.keys(feature.properties)).not.toContain("status");
      expect(Object.keys(feature.properties)).not.toContain("projectedEta");
    }
    const svg = resultToSvg(plannedInput);
    expect(svg).not.toContain("Projected ETA");
    expect(svg).not.toContain('class="position');
    expect(svg).not.toContain("data-status");
    expect(svg).not.toContain("Vehicle position");
    expect(svg).toContain(">Service start</text>");
    // The same result dispatched but drawn without a live day (a store that found nothing) is drawn the same.
    expect(resultToSvg({ ...plannedInput, result: result(true) })).toBe(svg);
  });
});

describe("SVG of a dispatched result", () => {
  const svg = resultToSvg(dispatchedInput);
  const stopGroup = (status: string) => svg.split("\n").filter((line) => line.includes(`data-status="${status}"`));

  it("marks done stops hollow in the route's colour and failed ones hollow red with a ×, each with a legend entry", () => {
    const [done] = stopGroup("DONE");
    expect(done).toContain('class="stop done"');
    expect(done).toContain(`fill="#ffffff" stroke="${routeColour(0)}"`);
    const [failed] = stopGroup("FAILED");
    expect(failed).toContain('class="stop failed"');
    expect(failed).toContain('stroke="#d62728"');
    expect(failed).toMatch(/<path d="M[\d.,]+L[\d.,]+M[\d.,]+L[\d.,]+" stroke="#d62728"/);
    expect(svg).toContain(">Done: 1</text>");
    expect(svg).toContain(">Failed: 1</text>");
  });

  it("rings a stop projected late in red and tells its status and projected ETA on hover", () => {
    const [late] = stopGroup("EN_ROUTE");
    expect(late).toContain('class="stop en-route"');
    expect(late).toContain(`fill="${routeColour(0)}" stroke="#d62728"`);
    expect(late).toContain(
      "<title>Van A #3: Stop a3, eta 2026-12-01 08:30, etd 2026-12-01 08:35, EN_ROUTE, projected 2026-12-01 08:52 (LATE)</title>",
    );
  });

  it("draws each vehicle's latest position (faded when over 5 minutes old) and names it in the legend", () => {
    const positions = svg.split("\n").filter((line) => line.includes('class="position'));
    expect(positions).toHaveLength(2);
    expect(positions[0]).toContain('data-vehicle-id="A"');
    expect(positions[0]).toContain('fill-opacity="1"');
    expect(positions[0]).toContain("<title>Van A at 08:38 UTC (2 min ago)</title>");
    expect(positions[1]).toContain('class="position stale"');
    expect(positions[1]).toContain('fill-opacity="0.4"');
    expect(svg).toContain(">Vehicle position: 2</text>");
    expect(svg).toContain(">(faded: over 5 minutes old)</text>");
    expect(svg).toContain(">Projected late (orange: at risk)</text>");
    expect(svg).toContain("dispatched, day as of 2026-12-01 08:40 UTC");
  });

  it("shows the projected ETA beside the planned one in the side table, with the status (and a risk other than on time)", () => {
    const table = svg.slice(svg.indexOf('<g id="stop-table">'));
    const texts = (line: string) => [...line.matchAll(/>([^<]*)<\/text>/g)].map((match) => match[1]);
    const lines = table.split("\n");
    expect(texts(lines[1] as string)).toEqual(["Stop", "Visit", "ETA", "Projected ETA", "Status", "Service start", "Window", "Load"]);
    const rows = lines.filter((line) => line.includes("2026-12-01 08:"));
    expect(rows.map(texts)).toEqual([
      ["Stop a1", "2026-12-01 08:10", "2026-12-01 08:12", "DONE", "08:10", "any time", ""],
      ["Stop a2", "2026-12-01 08:20", "2026-12-01 08:25", "FAILED", "08:20", "any time", ""],
      ["Stop a3", "2026-12-01 08:30", "2026-12-01 08:52", "EN_ROUTE LATE", "08:30", "any time", ""],
      ["Stop b1", "2026-12-01 08:10", "2026-12-01 08:10", "ASSIGNED", "08:10", "any time", ""],
    ]);
  });
});

describe("loadLiveMap", () => {
  const planned = result(true);
  const liveRoute = (vehicleId: string, visitIds: string[], resultId = "result-1"): LiveRoute => ({
    vehicleId,
    hubId: "hub-1",
    resultId,
    visitIds,
    departure: "2026-12-01 08:00",
    timeZone: "UTC",
    dispatchedTime: "2026-12-01 07:30:00",
    plan: {
      configurationId: "profile-1",
      planningDay: "2026-12-01",
      origin: "2026-12-01T08:00:00.000Z",
      departureMinutes: 0,
      returnMinutes: 60,
      firstTrip: 0,
      legs: visitIds.map(() => 10),
      breaks: [],
    },
  });
  const onRoute = (id: string, vehicleId: string, status: Visit["status"], order: number) =>
    visit(id, {
      status,
      assignedVehicleId: vehicleId,
      routingResultId: "result-1",
      routePlannedOrder: order,
      eta: `2026-12-01 08:${order * 10}`,
      visitTime: 5,
    });

  function ports(overrides: { routes?: Record<string, LiveRoute>; positions?: Record<string, Position> } = {}) {
    const calls = { liveRoute: [] as string[], visits: [] as string[][], positions: [] as string[][], vehicle: 0, configuration: 0 };
    const visits = [
      onRoute("a1", "A", "DONE", 1),
      onRoute("a2", "A", "FAILED", 2),
      onRoute("a3", "A", "ASSIGNED", 3),
      onRoute("b1", "B", "ASSIGNED", 1),
    ];
    const routes = overrides.routes ?? { A: liveRoute("A", ["a1", "a2", "a3"]), B: liveRoute("B", ["b1"]) };
    const positions = overrides.positions ?? {};
    const port: LiveMapPorts = {
      findLiveRoute: async (_organizationId, vehicleId) => {
        calls.liveRoute.push(vehicleId);
        return routes[vehicleId];
      },
      findVehicle: async (_organizationId, vehicleId) => {
        calls.vehicle++;
        return vehicle({ _id: vehicleId, workingTime: { startTime: "08:00", endTime: "17:00", multiday: 0 } });
      },
      findConfiguration: async () => {
        calls.configuration++;
        return profile({ _id: "profile-1" });
      },
      visitsOfHub: async (_organizationId, _hubId, ids) => {
        calls.visits.push([...ids]);
        return visits.filter((entry) => ids.includes(entry._id));
      },
      latestPositions: async (_organizationId, ids) => {
        calls.positions.push([...ids]);
        return new Map(Object.entries(positions));
      },
      now: () => new Date("2026-12-01T08:40:00.000Z"),
    };
    return { port, calls };
  }

  it("reads nothing for a result not dispatched", async () => {
    const { port, calls } = ports();
    expect(await loadLiveMap(port, "o", result(false))).toBeUndefined();
    expect(calls).toEqual({ liveRoute: [], visits: [], positions: [], vehicle: 0, configuration: 0 });
  });

  it("reads each vehicle's live route once, the visits and the positions in one batch each, and projects the open stops", async () => {
    const { port, calls } = ports({ positions: { A: { lat: -6.225, lng: 106.825, at: "2026-12-01T08:38:00.000Z" } } });
    const day = (await loadLiveMap(port, "o", planned)) as LiveMap;
    expect(calls.liveRoute).toEqual(["A", "B"]);
    expect(calls.visits).toHaveLength(1);
    expect(calls.visits[0]?.sort()).toEqual(["a1", "a2", "a3", "b1"]);
    expect(calls.positions).toEqual([["A", "B"]]);
    expect(calls.configuration).toBe(1);
    expect(day.asOf).toBe("2026-12-01T08:40:00.000Z");
    expect(day.stops.get("a1")).toMatchObject({ status: "DONE", risk: null });
    expect(day.stops.get("a2")).toMatchObject({ status: "FAILED", risk: null });
    // Van A's next stop starts from its fresh position, so it is projected no earlier than now.
    expect(day.stops.get("a3")).toMatchObject({ status: "ASSIGNED", risk: expect.any(String) });
    expect((day.stops.get("a3")?.projectedEta ?? "") >= "2026-12-01 08:40").toBe(true);
    expect(day.stops.get("b1")).toMatchObject({ status: "ASSIGNED", projectedEta: expect.any(String) });
    expect([...day.vehicles.values()]).toEqual([
      { vehicleId: "A", lat: -6.225, lng: 106.825, at: "2026-12-01T08:38:00.000Z", ageMinutes: 2, fresh: true, currentVisitId: "a3" },
    ]);
  });

  it("shows statuses but neither projection nor position for a vehicle a later dispatch took over, and no position reported before this dispatch", async () => {
    const { port, calls } = ports({
      routes: { A: liveRoute("A", ["a3"], "result-2"), B: liveRoute("B", ["b1"]) },
      positions: {
        A: { lat: -6.225, lng: 106.825, at: "2026-12-01T08:38:00.000Z" },
        B: { lat: -6.195, lng: 106.795, at: "2026-12-01T07:29:59.000Z" },
      },
    });
    const day = (await loadLiveMap(port, "o", planned)) as LiveMap;
    expect(day.stops.get("a1")).toEqual({ status: "DONE", projectedEta: null, projectedEtd: null, slackMinutes: null, risk: null });
    expect(day.stops.get("a3")).toEqual({ status: "ASSIGNED", projectedEta: null, projectedEtd: null, slackMinutes: null, risk: null });
    expect(day.stops.get("b1")?.projectedEta).toEqual(expect.any(String));
    expect(day.vehicles.size).toBe(0);
    // Only the vehicle still driving this result is read for its projection.
    expect(calls.vehicle).toBe(1);
  });

  it("marks a position over 5 minutes old as not fresh (drawn faded; the ETAs start elsewhere)", async () => {
    const { port } = ports({ positions: { B: { lat: -6.195, lng: 106.795, at: "2026-12-01T08:30:00.000Z" } } });
    const day = (await loadLiveMap(port, "o", planned)) as LiveMap;
    expect(day.vehicles.get("B")).toMatchObject({ ageMinutes: 10, fresh: false, currentVisitId: "b1" });
  });
});
