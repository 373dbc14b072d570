import { describe, expect, it } from "vitest";
import { resultGeoJsonSchema, resultToGeoJson } from "#shared/domain/routing-results/geojson";
import type { ResultMapInput } from "#shared/domain/routing-results/map-input";
import { returnsToHub, routeColour } from "#shared/domain/routing-results/map-input";
import { formatDistance, niceDistance, resultToSvg } from "#shared/domain/routing-results/map-svg";
import type { RoutingResult } from "#shared/domain/routing-results/schema";
import { rfc7946Problems } from "#test/support/geojson-rfc7946";

/** The pure renderers of a routing result's map (SVG) and GeoJSON. */
type Trip = RoutingResult["routes"][number]["trips"][number];
const trip = (order: number, lat: number, lng: number, distanceMeters: number, name = `Stop ${order}`): Trip => ({
  order,
  visitId: `visit-${lat}-${lng}`,
  visitName: name,
  coordinate: { lat, lng },
  eta: `2026-11-24 08:${String(order * 10).padStart(2, "0")}`,
  etd: `2026-11-24 08:${String(order * 10 + 5).padStart(2, "0")}`,
  serviceStart: `2026-11-24 08:${String(order * 10).padStart(2, "0")}`,
  waitingMinutes: 0,
  distanceMeters,
  load: {},
});
const route = (vehicleId: string, trips: Trip[], distanceMeters: number): RoutingResult["routes"][number] => ({
  vehicleId,
  vehicleName: `Van ${vehicleId}`,
  departure: "2026-11-24 08:00",
  arrival: "2026-11-24 10:00",
  distanceMeters,
  durationMinutes: 120,
  travelMinutes: 90,
  waitingMinutes: 0,
  serviceMinutes: 30,
  load: {},
  breaks: [],
  trips,
});

function result(routes: RoutingResult["routes"], dropped: RoutingResult["dropped"] = []): RoutingResult {
  return {
    _id: "result-1",
    name: "Friday <run> & co",
    hubId: "hub-1",
    configurationId: "profile-1",
    scheduleId: null,
    createdFrom: "API",
    parentResultId: null,
    status: "done",
    message: null,
    summary: {
      vehiclesUsed: routes.length,
      vehiclesAvailable: 3,
      visitsPlanned: 5,
      visitsAssigned: 3,
      visitsDropped: dropped.length,
      distanceMeters: 9000,
      durationMinutes: 240,
      planningDay: "2026-11-24",
      timeZone: "Asia/Jakarta",
    },
    dispatch: null,
    runTime: "2026-11-24 01:00:00",
    organizationId: "org-1",
    createdBy: "user-1",
    createdTime: "2026-11-24 01:00:00",
    updatedTime: "2026-11-24 01:00:05",
    finishedTime: "2026-11-24 01:00:05",
    routes,
    dropped,
  };
}

const hub = { name: "Depot", lat: -6.2, lng: 106.8 };
// Van A returns to the hub (route distance > its legs); van B ends at its last stop.
const vanA = route("A", [trip(1, -6.21, 106.81, 1500), trip(2, -6.22, 106.83, 2500)], 7000);
const vanB = route("B", [trip(1, -6.19, 106.79, 1400)], 1400);
const dropped = [
  { visitId: "far-away", visitName: "Far", reason: "could not be fitted" },
  { visitId: "broken", visitName: "Broken", reason: "bad coordinates" },
];
const input: ResultMapInput = {
  result: result([vanA, vanB], dropped),
  hub,
  droppedPositions: new Map([["far-away", { lat: -6.25, lng: 106.9 }]]),
};

describe("resultToGeoJson (RFC 7946)", () => {
  const geojson = resultToGeoJson(input);

  it("is a valid RFC 7946 FeatureCollection and matches the documented schema", () => {
    expect(rfc7946Problems(geojson)).toEqual([]);
    expect(resultGeoJsonSchema.safeParse(geojson).success).toBe(true);
  });

  it("draws one LineString per route in [longitude, latitude] order, from the hub and back when the route returns", () => {
    const lines = geojson.features.filter((feature) => feature.geometry?.type === "LineString");
    expect(lines.map((line) => line.properties)).toMatchObject([
      { kind: "route", vehicleId: "A", stops: 2, returnsToHub: true, stroke: routeColour(0) },
      { kind: "route", vehicleId: "B", stops: 1, returnsToHub: false, stroke: routeColour(1) },
    ]);
    expect(lines[0]?.geometry?.coordinates).toEqual([
      [106.8, -6.2],
      [106.81, -6.21],
      [106.83, -6.22],
      [106.8, -6.2],
    ]);
    expect(lines[1]?.geometry?.coordinates).toEqual([
      [106.8, -6.2],
      [106.79, -6.19],
    ]);
  });

  it("has a Point per stop with vehicle, order, eta and etd, the hub, and every unassigned visit (null geometry when unplaceable)", () => {
    const stops = geojson.features.filter((feature) => feature.properties.kind === "stop");
    expect(stops.map((stop) => [stop.properties, stop.geometry])).toEqual([
      [
        expect.objectContaining({ vehicleId: "A", order: 1, eta: "2026-11-24 08:10", etd: "2026-11-24 08:15" }),
        { type: "Point", coordinates: [106.81, -6.21] },
      ],
      [expect.objectContaining({ vehicleId: "A", order: 2 }), { type: "Point", coordinates: [106.83, -6.22] }],
      [expect.objectContaining({ vehicleId: "B", order: 1, vehicleName: "Van B" }), { type: "Point", coordinates: [106.79, -6.19] }],
    ]);
    expect(geojson.features.find((feature) => feature.properties.kind === "hub")).toMatchObject({
      geometry: { type: "Point", coordinates: [106.8, -6.2] },
      properties: { name: "Depot" },
    });
    const unassigned = geojson.features.filter((feature) => feature.properties.kind === "unassigned");
    expect(unassigned.map((feature) => [(feature.properties as { visitId: string }).visitId, feature.geometry])).toEqual([
      ["far-away", { type: "Point", coordinates: [106.9, -6.25] }],
      ["broken", null],
    ]);
    expect(geojson.bbox).toEqual([106.79, -6.25, 106.9, -6.19]);
  });

  it("leaves out a LineString of a single position (no hub, one stop) and rounds to 6 decimals", () => {
    const lone = resultToGeoJson({
      result: result([route("C", [trip(1, -6.123456789, 106.987654321, 10)], 10)]),
      hub: undefined,
      droppedPositions: new Map(),
    });
    expect(rfc7946Problems(lone)).toEqual([]);
    expect(lone.features.map((feature) => feature.geometry?.type)).toEqual(["Point"]);
    expect(lone.features[0]?.geometry?.coordinates).toEqual([106.987654, -6.123457]);
  });

  it("the structural check itself finds swapped coordinates, short lines and missing members", () => {
    expect(rfc7946Problems({ type: "Feature", geometry: { type: "Point", coordinates: [-6.2, 106.8] }, properties: {} })).toEqual([
      "$.geometry.coordinates: latitude 106.8 outside -90..90 (positions are [longitude, latitude])",
    ]);
    expect(
      rfc7946Problems({
        type: "FeatureCollection",
        features: [{ type: "Feature", geometry: { type: "LineString", coordinates: [[1, 2]] } }],
      }),
    ).toEqual(["$.features[0].geometry.coordinates: needs at least 2 positions", "$.features[0]: a Feature has a properties member"]);
  });
});

describe("resultToSvg", () => {
  const svg = resultToSvg(input);

  it("draws the hub, a coloured polyline and numbered stops per route, the dashed way back, and the unassigned visit", () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.match(/<g class="route"/g)).toHaveLength(2);
    expect(svg.match(/<g class="stop">/g)).toHaveLength(3);
    expect(svg).toContain(`stroke="${routeColour(0)}"`);
    expect(svg).toContain(`stroke="${routeColour(1)}"`);
    expect(svg.match(/stroke-dasharray="6 4" stroke-opacity/g)).toHaveLength(1); // only van A returns
    expect(svg).toMatch(/<text[^>]*>2<\/text>/);
    expect(svg).toContain("<title>Hub: Depot</title>");
    expect(svg).toContain("Unassigned: Far (could not be fitted)");
    expect(svg).toContain("Unassigned: 2 (1 without a position)");
    expect(svg).toContain("Van A: 2 stops, 7 km");
  });

  it("escapes every name (no markup from data) and fetches nothing", () => {
    expect(svg).toContain("Friday &lt;run&gt; &amp; co");
    expect(svg).not.toContain("<run>");
    expect(svg).not.toMatch(/href=|<script|<image|url\(/);
  });

  it("is well-formed XML for any stored name: characters XML cannot carry (controls, lone surrogates, U+FFFF) become U+FFFD", () => {
    const hostile = "Depot\u0000\u001b[31m\ud800 \uffff<x>&";
    const drawn = resultToSvg({
      ...input,
      hub: { ...input.hub, name: hostile },
      result: { ...input.result, name: hostile },
    } as ResultMapInput);
    const illegal = [...drawn].filter((character) => {
      const code = character.codePointAt(0) as number;
      const legal =
        code === 0x9 ||
        code === 0xa ||
        code === 0xd ||
        (code >= 0x20 && code <= 0xd7ff) ||
        (code >= 0xe000 && code <= 0xfffd) ||
        code >= 0x10000;
      return !legal;
    });
    expect(illegal).toEqual([]);
    expect(drawn).toContain("Depot\ufffd\ufffd[31m\ufffd \ufffd&lt;x&gt;&amp;");
  });

  it("has balanced tags", () => {
    const stack: string[] = [];
    for (const [, closing, name, selfClosing] of svg.matchAll(/<(\/?)([a-zA-Z]+)[^>]*?(\/?)>/g)) {
      if (closing) expect(stack.pop()).toBe(name);
      else if (!selfClosing) stack.push(name as string);
    }
    expect(stack).toEqual([]);
  });

  it("has a scale bar of a round distance and says when there is nothing to draw", () => {
    expect(svg).toMatch(/<g id="scale-bar">.*>(\d+ m|\d+(\.\d)? km)<\/text>/);
    const empty = resultToSvg({ result: { ...result([]), status: "ongoing", summary: null }, hub: undefined, droppedPositions: new Map() });
    expect(empty).toContain("Nothing to draw");
    expect(empty).not.toContain('id="scale-bar"');
  });

  it.each([
    [1, 1],
    [7, 5],
    [180, 100],
    [2600, 2000],
    [49_000, 20_000],
  ])("niceDistance(%d) = %d", (metres, expected) => expect(niceDistance(metres)).toBe(expected));

  it("formats distances in m and km; infers the way back from the route's distance", () => {
    expect([formatDistance(500), formatDistance(2000), formatDistance(12_345)]).toEqual(["500 m", "2 km", "12.3 km"]);
    expect([returnsToHub(vanA), returnsToHub(vanB)]).toEqual([true, false]);
  });

  it("prints what the tooltips said: a stop table (number, name, ETA, window, load) and the travel source in the picture", () => {
    const svg = resultToSvg(input);
    const table = svg.slice(svg.indexOf('<g id="stop-table">'), svg.indexOf("</g>", svg.indexOf('<g id="stop-table">')));
    for (const [index, van] of [vanA, vanB].entries()) {
      for (const stop of van.trips) {
        expect(table).toContain(`>${index + 1}.${stop.order}</text>`);
        expect(table).toContain(`>${stop.visitName}</text>`);
        expect(table).toContain(`>${stop.eta}</text>`);
      }
    }
    expect(table).toContain(">any time</text>");
    expect(svg).toContain("travel: greatCircle");
    expect(svg).toContain("Straight lines between stops");
    expect(svg).toContain("(great circle), not along roads");
  });
});
