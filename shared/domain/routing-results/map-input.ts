import type { Caller } from "#shared/domain/caller";
import type { LiveMap } from "#shared/domain/routing-results/map-live";
import type { RoutingResult } from "#shared/domain/routing-results/schema";
import { decodePolyline } from "#shared/domain/travel/road-geometry";

/**
 * What the pictures of a routing result are drawn from (GET /routing/result/{id}/map.svg and
 * `?format=geojson`): the result itself, where its hub is, and where its unassigned visits are.
 * The result stores the coordinate of every planned stop but not of the hub or of dropped visits:
 * those are read when the picture is asked for (a hub or visit deleted since is left off the map,
 * and counted).
 */
export interface Position {
  lat: number;
  lng: number;
}

export interface MapHub extends Position {
  name: string;
}

export interface ResultMapInput {
  result: RoutingResult;
  hub: MapHub | undefined;
  /** Dropped visits' coordinates by visit id (only the visits still found on the result's hub). */
  droppedPositions: ReadonlyMap<string, Position>;
  /** A dispatched result's day as it stands (map-live.ts); absent on a result not dispatched, drawn as planned. */
  live?: LiveMap | undefined;
}

export interface ResultMapPorts {
  /** The result as GET /routing/result/{id} answers it (404 rules included). */
  getResult(caller: Caller, resultId: string): Promise<RoutingResult>;
  findHub(organizationId: string, hubId: string): Promise<MapHub | undefined>;
  /** Coordinates of these visits of the hub (missing ones left out); bounded by the result's 1,500 visits. */
  visitPositions(organizationId: string, hubId: string, visitIds: readonly string[]): Promise<Map<string, Position>>;
  /** The live day of a dispatched result (map-live.ts `loadLiveMap`); undefined when not dispatched. */
  liveDay?(organizationId: string, result: RoutingResult): Promise<LiveMap | undefined>;
}

/** Dropped for bad coordinates: nothing to place on a map, so not looked up. */
const unplaceable = (reason: string) => reason === "bad coordinates";

export async function loadResultMapInput(ports: ResultMapPorts, caller: Caller, resultId: string): Promise<ResultMapInput> {
  const result = await ports.getResult(caller, resultId);
  const droppedIds = result.dropped.filter((entry) => !unplaceable(entry.reason)).map((entry) => entry.visitId);
  const [hub, droppedPositions, live] = await Promise.all([
    ports.findHub(caller.organizationId, result.hubId),
    droppedIds.length > 0
      ? ports.visitPositions(caller.organizationId, result.hubId, droppedIds)
      : Promise.resolve(new Map<string, Position>()),
    result.dispatch && ports.liveDay ? ports.liveDay(caller.organizationId, result) : Promise.resolve(undefined),
  ]);
  return { result, hub, droppedPositions, ...(live ? { live } : {}) };
}

/** Twelve colours that stay apart on white (Tableau 10 and two more); then hues a golden angle apart. */
const palette = [
  "#4e79a7",
  "#f28e2b",
  "#e15759",
  "#76b7b2",
  "#59a14f",
  "#edc948",
  "#b07aa1",
  "#ff9da7",
  "#9c755f",
  "#2f4b7c",
  "#d45087",
  "#665191",
];

export function routeColour(index: number): string {
  return palette[index] ?? `hsl(${Math.round((index * 137.508) % 360)}, 65%, 42%)`;
}

/**
 * Whether a route drives back to the hub after its last stop: the stored route distance then
 * exceeds the sum of its legs (each rounded to the metre, hence the tolerance). The result does not
 * store the profile's returnToHub, which may have changed since the run.
 */
export function returnsToHub(route: RoutingResult["routes"][number]): boolean {
  const legs = route.trips.reduce((sum, trip) => sum + trip.distanceMeters, 0);
  return route.distanceMeters - legs > route.trips.length + 1;
}

/**
 * A route's road lines when the result stored them (`roadGeometry`): `out` from its start through every stop,
 * `back` the drive back (empty when it does not return); undefined when the route has none (or an unreadable one),
 * and the pictures then join its stops straight.
 */
export function roadLines(route: RoutingResult["routes"][number]): { out: Position[]; back: Position[] } | undefined {
  const legs = route.roadGeometry?.legs;
  if (!legs || legs.length < route.trips.length || route.trips.length === 0) return undefined;
  try {
    const decoded = legs.map((leg) => decodePolyline(leg));
    const join = (lines: Position[][]) => lines.flatMap((line, i) => (i === 0 ? line : line.slice(1)));
    return { out: join(decoded.slice(0, route.trips.length)), back: join(decoded.slice(route.trips.length)) };
  } catch {
    return undefined;
  }
}
