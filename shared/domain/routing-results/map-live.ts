import type { RoutingConfiguration } from "#shared/domain/configurations/schema";
import { projectionInputOf } from "#shared/domain/live/live-routes";
import { POSITION_FRESH_MINUTES, type Position, projectRoute, type Risk } from "#shared/domain/live/projection";
import type { RoutingResult } from "#shared/domain/routing-results/schema";
import type { LiveRoute } from "#shared/domain/runs/live-day";
import type { Vehicle } from "#shared/domain/vehicles/schema";
import type { Visit } from "#shared/domain/visits/schema";

/**
 * The day as it stands, for the map and GeoJSON of a dispatched result (docs/api/routing-runs.md, "Result
 * maps and GeoJSON"): each planned stop's live status with its projected ETA and risk, and where each vehicle
 * last reported. Projections are the ones GET /vehicle/{vehicleId}/route answers (projection.ts), made from one
 * read of each vehicle's live route, one batch read of the visits and one of the latest positions.
 */
export interface LiveMapStop {
  /** The visit's status now (`DELETED` when it is gone). */
  status: string;
  /** Projected (open stop) or observed (finished stop) arrival, `Y-m-d H:i`; null when this result no longer drives the vehicle. */
  projectedEta: string | null;
  projectedEtd: string | null;
  slackMinutes: number | null;
  risk: Risk | null;
}

export interface LiveMapVehicle {
  vehicleId: string;
  lat: number;
  lng: number;
  /** When the vehicle reported it, ISO 8601 UTC. */
  at: string;
  ageMinutes: number;
  /** Under POSITION_FRESH_MINUTES old: the position the projected ETAs start from. */
  fresh: boolean;
  /** The stop the vehicle is heading to or at. */
  currentVisitId: string | null;
}

export interface LiveMap {
  /** When the day was projected, ISO 8601 UTC. */
  asOf: string;
  stops: ReadonlyMap<string, LiveMapStop>;
  vehicles: ReadonlyMap<string, LiveMapVehicle>;
}

export interface LiveMapPorts {
  findLiveRoute(organizationId: string, vehicleId: string): Promise<LiveRoute | undefined>;
  findVehicle(organizationId: string, vehicleId: string): Promise<Vehicle | undefined>;
  findConfiguration(organizationId: string, configurationId: string): Promise<RoutingConfiguration | undefined>;
  visitsOfHub(organizationId: string, hubId: string, visitIds: readonly string[]): Promise<Visit[]>;
  /** Latest reported position per vehicle (vehicles that never reported left out). */
  latestPositions(organizationId: string, vehicleIds: readonly string[]): Promise<ReadonlyMap<string, Position>>;
  now?: () => Date;
}

/** `Y-m-d H:i:s` (UTC, as dispatch stores it) in milliseconds. */
const utcMillis = (text: string) => Date.parse(`${text.replace(" ", "T")}Z`);

/**
 * Reads and projects the day of a dispatched result. A vehicle counts as driving this result while its live
 * route is this result's (a later dispatch, e.g. of a re-plan, takes it over): only then are its stops
 * projected and its position drawn, and the position only when reported since this result's last dispatch.
 * Every stop of the result shows its visit's status now, whoever drives it.
 */
export async function loadLiveMap(ports: LiveMapPorts, organizationId: string, result: RoutingResult): Promise<LiveMap | undefined> {
  if (!result.dispatch) return undefined;
  const now = (ports.now ?? (() => new Date()))();
  const vehicleIds = result.routes.map((route) => route.vehicleId);
  const [liveRoutes, positions] = await Promise.all([
    Promise.all(vehicleIds.map((vehicleId) => ports.findLiveRoute(organizationId, vehicleId))),
    vehicleIds.length > 0 ? ports.latestPositions(organizationId, vehicleIds) : Promise.resolve(new Map<string, Position>()),
  ]);
  const driving = liveRoutes.filter((route): route is LiveRoute => route?.resultId === result._id);
  const visitIds = new Set([
    ...result.routes.flatMap((route) => route.trips.map((trip) => trip.visitId)),
    ...driving.flatMap((route) => route.visitIds),
  ]);
  const configurationIds = [...new Set(driving.flatMap((route) => (route.plan ? [route.plan.configurationId] : [])))];
  const [visitList, vehicles, configurations] = await Promise.all([
    ports.visitsOfHub(organizationId, result.hubId, [...visitIds]),
    Promise.all(driving.map((route) => (route.plan ? ports.findVehicle(organizationId, route.vehicleId) : Promise.resolve(undefined)))),
    Promise.all(configurationIds.map((id) => ports.findConfiguration(organizationId, id))),
  ]);
  const visits = new Map(visitList.map((visit) => [visit._id, visit]));
  const configurationOf = new Map(configurationIds.map((id, index) => [id, configurations[index]]));

  const stops = new Map<string, LiveMapStop>();
  for (const visitId of visitIds) {
    stops.set(visitId, {
      status: visits.get(visitId)?.status ?? "DELETED",
      projectedEta: null,
      projectedEtd: null,
      slackMinutes: null,
      risk: null,
    });
  }
  const dispatchedAt = utcMillis(result.dispatch.dispatchedTime);
  const vehicleMarks = new Map<string, LiveMapVehicle>();
  driving.forEach((route, index) => {
    const reported = positions.get(route.vehicleId);
    let currentVisitId: string | null = null;
    const vehicle = vehicles[index];
    const configuration = route.plan ? configurationOf.get(route.plan.configurationId) : undefined;
    if (route.plan && vehicle && configuration) {
      const input = projectionInputOf({
        route,
        plan: route.plan,
        vehicle,
        configuration,
        visits,
        position: reported,
        at: now,
        observed: route.progress?.observed ?? {},
      });
      const projection = projectRoute(input);
      currentVisitId = projection.currentVisitId;
      for (const stop of projection.stops) {
        const { visitId: _id, plannedEta: _planned, ...live } = stop;
        stops.set(stop.visitId, live);
      }
    }
    if (reported && Date.parse(reported.at) >= dispatchedAt) {
      const ageMinutes = Math.max(0, (now.getTime() - Date.parse(reported.at)) / 60_000);
      vehicleMarks.set(route.vehicleId, {
        vehicleId: route.vehicleId,
        lat: reported.lat,
        lng: reported.lng,
        at: reported.at,
        ageMinutes: Math.floor(ageMinutes),
        fresh: ageMinutes < POSITION_FRESH_MINUTES,
        currentVisitId,
      });
    }
  });
  return { asOf: now.toISOString(), stops, vehicles: vehicleMarks };
}
