import * as z from "zod/mini";
import { riskLevels } from "#shared/domain/live/projection";
import { component } from "#shared/domain/schemas";
import { type Position, type ResultMapInput, returnsToHub, roadLines, routeColour } from "#shared/domain/routing-results/map-input";

/**
 * A routing result as GeoJSON (RFC 7946), for people who use their own map tools: a
 * FeatureCollection with the hub (Point), one LineString per route (hub → stops → hub when the
 * route returns), a Point per stop with its order, eta and etd, and a Feature per unassigned visit
 * (a Point, or `geometry: null` when its position is unknown). A dispatched result's stops also carry their
 * live `status`, `projectedEta` and `risk`, and each vehicle driving it its latest position (`kind: "vehicle"`).
 * Positions are `[longitude, latitude]`
 * (RFC 7946 §3.1.1), WGS84, at most 6 decimals (§11.2). `stroke`/`marker-color` follow the common
 * simplestyle convention, so map tools draw each vehicle in the colour of the SVG map.
 */
const positionSchema = z.tuple([z.number().check(z.describe("longitude")), z.number().check(z.describe("latitude"))]);
const pointSchema = z.object({ type: z.literal("Point"), coordinates: positionSchema });
const lineStringSchema = z.object({ type: z.literal("LineString"), coordinates: z.array(positionSchema).check(z.minLength(2)) });

const hubFeatureSchema = z.object({
  type: z.literal("Feature"),
  geometry: pointSchema,
  properties: z.object({ kind: z.literal("hub"), hubId: z.string(), name: z.string(), "marker-color": z.string() }),
});
const routeFeatureSchema = z.object({
  type: z.literal("Feature"),
  geometry: lineStringSchema,
  properties: z.object({
    kind: z.literal("route"),
    vehicleId: z.string(),
    vehicleName: z.string(),
    stops: z.number().check(z.int()),
    departure: z.string(),
    arrival: z.string(),
    distanceMeters: z.number(),
    durationMinutes: z.number(),
    returnsToHub: z.boolean(),
    travelSource: z
      .string()
      .check(z.describe("Where the plan's travel came from (summary.travel.source): greatCircle, osrm, amazonLocation.")),
    lineKind: z
      .enum(["road", "straight"])
      .check(
        z.describe(
          "road: the line follows the roads the route drives (the travel provider's route geometry, from the vehicle's start); straight: it joins the stops straight (great circle), not the road driven.",
        ),
      ),
    stroke: z.string(),
  }),
});
const stopFeatureSchema = z.object({
  type: z.literal("Feature"),
  geometry: pointSchema,
  properties: z.object({
    kind: z.literal("stop"),
    vehicleId: z.string(),
    vehicleName: z.string(),
    order: z.number().check(z.int(), z.describe("1-based position on the vehicle's route.")),
    visitId: z.string(),
    visitName: z.string(),
    eta: z.string().check(z.describe("Arrival, Y-m-d H:i in the result's time zone.")),
    etd: z.string().check(z.describe("Departure after service, Y-m-d H:i.")),
    serviceStart: z.optional(z.string()),
    window: z.nullable(z.string()).check(z.describe("The visit's time windows as stored; null without.")),
    load: z.record(z.string(), z.number()),
    "marker-color": z.string(),
    // Present on a dispatched result (map-live.ts): the stop as the day stands.
    status: z.optional(
      z
        .string()
        .check(
          z.describe("Dispatched result only: the visit's status now (ASSIGNED, EN_ROUTE, ARRIVED, DONE, FAILED, …; DELETED when gone)."),
        ),
    ),
    projectedEta: z.optional(
      z
        .nullable(z.string())
        .check(
          z.describe(
            "Dispatched result only: projected arrival (open stop) or observed one (finished stop), Y-m-d H:i, as GET /vehicle/{vehicleId}/route answers it; null when a later dispatch took the vehicle over.",
          ),
        ),
    ),
    projectedEtd: z.optional(z.nullable(z.string()).check(z.describe("Dispatched result only: projected (or observed) end of service."))),
    slackMinutes: z.optional(
      z.nullable(z.number()).check(z.describe("Dispatched result only: minutes to the latest allowed service start.")),
    ),
    risk: z.optional(
      z.nullable(z.enum(riskLevels)).check(z.describe("Dispatched result only: ON_TIME, AT_RISK or LATE; null when finished.")),
    ),
  }),
});
const vehicleFeatureSchema = z.object({
  type: z.literal("Feature"),
  geometry: pointSchema,
  properties: z.object({
    kind: z.literal("vehicle"),
    vehicleId: z.string(),
    vehicleName: z.string(),
    at: z.string().check(z.describe("When the vehicle reported this position (ISO 8601 UTC).")),
    ageMinutes: z.number().check(z.int(), z.describe("Whole minutes since `at` when the map was drawn.")),
    fresh: z.boolean().check(z.describe("Under 5 minutes old: the position the projected ETAs start from.")),
    currentVisitId: z.nullable(z.string()).check(z.describe("The stop the vehicle is heading to or at.")),
    "marker-color": z.string(),
  }),
});
const unassignedFeatureSchema = z.object({
  type: z.literal("Feature"),
  geometry: z.nullable(pointSchema).check(z.describe("null when the visit has no usable position (bad coordinates, or deleted since).")),
  properties: z.object({
    kind: z.literal("unassigned"),
    visitId: z.string(),
    visitName: z.string(),
    reason: z.string(),
    reasonCode: z.optional(z.string()),
    "marker-color": z.string(),
  }),
});

export const resultGeoJsonSchema = z
  .object({
    type: z.literal("FeatureCollection"),
    bbox: z
      .optional(z.tuple([z.number(), z.number(), z.number(), z.number()]))
      .check(z.describe("[west, south, east, north] of every located feature.")),
    features: z.array(z.union([hubFeatureSchema, routeFeatureSchema, stopFeatureSchema, unassignedFeatureSchema, vehicleFeatureSchema])),
  })
  .check(z.describe("RFC 7946 FeatureCollection (application/geo+json)."));
export type ResultGeoJson = z.infer<typeof resultGeoJsonSchema>;
type Feature = ResultGeoJson["features"][number];

const HUB_COLOUR = "#222222";
const UNASSIGNED_COLOUR = "#7f7f7f";

const sixDecimals = (value: number) => Math.round(value * 1e6) / 1e6;
const position = (at: Position): [number, number] => [sixDecimals(at.lng), sixDecimals(at.lat)];

export function resultToGeoJson({ result, hub, droppedPositions, live }: ResultMapInput): ResultGeoJson {
  const features: Feature[] = [];
  if (hub) {
    features.push({
      type: "Feature",
      geometry: { type: "Point", coordinates: position(hub) },
      properties: { kind: "hub", hubId: result.hubId, name: hub.name, "marker-color": HUB_COLOUR },
    });
  }
  result.routes.forEach((route, index) => {
    const colour = routeColour(index);
    const roads = roadLines(route);
    const returns = roads ? roads.back.length > 0 : returnsToHub(route);
    const line = roads
      ? dedupe([...roads.out, ...roads.back.slice(1)].map(position))
      : [
          ...(hub ? [position(hub)] : []),
          ...route.trips.map((trip) => position(trip.coordinate)),
          ...(hub && returns ? [position(hub)] : []),
        ];
    // A LineString has two or more positions (RFC 7946 §3.1.4): a lone stop without a known hub has no line.
    if (line.length >= 2) {
      features.push({
        type: "Feature",
        geometry: { type: "LineString", coordinates: line },
        properties: {
          kind: "route",
          vehicleId: route.vehicleId,
          vehicleName: route.vehicleName,
          stops: route.trips.length,
          departure: route.departure,
          arrival: route.arrival,
          distanceMeters: route.distanceMeters,
          durationMinutes: route.durationMinutes,
          returnsToHub: returns,
          travelSource: result.summary?.travel?.source ?? "greatCircle",
          lineKind: roads ? "road" : "straight",
          stroke: colour,
        },
      });
    }
    for (const trip of route.trips) {
      features.push({
        type: "Feature",
        geometry: { type: "Point", coordinates: position(trip.coordinate) },
        properties: {
          kind: "stop",
          vehicleId: route.vehicleId,
          vehicleName: route.vehicleName,
          order: trip.order,
          visitId: trip.visitId,
          visitName: trip.visitName,
          eta: trip.eta,
          etd: trip.etd,
          serviceStart: trip.serviceStart,
          window: trip.window ?? null,
          load: trip.load,
          "marker-color": colour,
          ...liveStop(live, trip.visitId),
        },
      });
    }
    const at = live?.vehicles.get(route.vehicleId);
    if (at) {
      features.push({
        type: "Feature",
        geometry: { type: "Point", coordinates: position(at) },
        properties: {
          kind: "vehicle",
          vehicleId: route.vehicleId,
          vehicleName: route.vehicleName,
          at: at.at,
          ageMinutes: at.ageMinutes,
          fresh: at.fresh,
          currentVisitId: at.currentVisitId,
          "marker-color": colour,
        },
      });
    }
  });
  for (const dropped of result.dropped) {
    const at = droppedPositions.get(dropped.visitId);
    features.push({
      type: "Feature",
      geometry: at ? { type: "Point", coordinates: position(at) } : null,
      properties: {
        kind: "unassigned",
        visitId: dropped.visitId,
        visitName: dropped.visitName,
        reason: dropped.reason,
        ...(dropped.reasonCode ? { reasonCode: dropped.reasonCode } : {}),
        "marker-color": UNASSIGNED_COLOUR,
      },
    });
  }
  const box = boundingBox(features);
  return { type: "FeatureCollection", ...(box ? { bbox: box } : {}), features };
}

/** A dispatched result's stop as the day stands; nothing on a result not dispatched (its stops stay as planned). */
function liveStop(live: ResultMapInput["live"], visitId: string) {
  const stop = live?.stops.get(visitId);
  if (!live) return {};
  return {
    status: stop?.status ?? "DELETED",
    projectedEta: stop?.projectedEta ?? null,
    projectedEtd: stop?.projectedEtd ?? null,
    slackMinutes: stop?.slackMinutes ?? null,
    risk: stop?.risk ?? null,
  };
}

/** Without consecutive repeats (a polyline's points rounded to 6 decimals can meet). */
function dedupe(line: [number, number][]): [number, number][] {
  return line.filter((point, i) => i === 0 || point[0] !== line[i - 1]![0] || point[1] !== line[i - 1]![1]);
}

function boundingBox(features: readonly Feature[]): [number, number, number, number] | undefined {
  const positions = features.flatMap((feature) => {
    if (!feature.geometry) return [];
    return feature.geometry.type === "Point" ? [feature.geometry.coordinates] : feature.geometry.coordinates;
  });
  if (positions.length === 0) return undefined;
  const lngs = positions.map(([lng]) => lng);
  const lats = positions.map(([, lat]) => lat);
  return [Math.min(...lngs), Math.min(...lats), Math.max(...lngs), Math.max(...lats)];
}

// Named components of the OpenAPI document (docs/architecture.md, "How to name a schema in the OpenAPI document").
component("RoutingResultGeoJson", resultGeoJsonSchema);
