import { DateTime } from "luxon";
import { type Caller, callerMayUseHub } from "#shared/domain/caller";
import type { RoutingConfiguration } from "#shared/domain/configurations/schema";
import { NotFoundError } from "#shared/domain/errors";
import {
  etaChanges,
  geofenceArrivalSample,
  mayArriveByGeofence,
  type ObservedStop,
  type Position,
  type ProjectedStop,
  type ProjectionInput,
  plannedProjection,
  projectRoute,
  type RouteProjection,
} from "#shared/domain/live/projection";
import type { LivePlan, LiveProgress, LiveRoute } from "#shared/domain/runs/live-day";
import { currentOrNextShift } from "#shared/domain/runs/build-problem";
import type { Vehicle } from "#shared/domain/vehicles/schema";
import type { ProgressAction } from "#shared/domain/visits/lifecycle";
import type { Visit } from "#shared/domain/visits/schema";

/** What GET /vehicle/{vehicleId}/route answers. */
export interface LiveRouteView {
  vehicleId: string;
  /** The result whose dispatch gave the vehicle this route; null when it has none. */
  routingResultId: string | null;
  stops: ProjectedStop[];
  currentVisitId: string | null;
  position: Position | null;
  projectedReturn: string | null;
  overtimeMinutes: number;
  pace: number | null;
}

export interface LiveRoutePorts {
  findLiveRoute(organizationId: string, vehicleId: string): Promise<LiveRoute | undefined>;
  findVehicle(organizationId: string, vehicleId: string): Promise<Vehicle | undefined>;
  findConfiguration(organizationId: string, configurationId: string): Promise<RoutingConfiguration | undefined>;
  visitsOfHub(organizationId: string, hubId: string, visitIds: readonly string[]): Promise<Visit[]>;
  /** The vehicle's latest position sample (POST /vehicle/{vehicleId}/positions writes it; undefined until then). */
  latestPosition(organizationId: string, vehicleId: string): Promise<Position | undefined>;
  /** One conditional write of the route's progress state; false when the route or its state changed since read. */
  recordProgress(
    organizationId: string,
    vehicleId: string,
    resultId: string,
    readVersion: number | undefined,
    progress: LiveProgress,
  ): Promise<boolean>;
  /**
   * Geofence arrival: the driver's `arrive` of `visitId` on the visits' own path (source `geofence`);
   * false when the visit had moved on and nothing was written. Without it, positions never arrive a visit.
   */
  arriveByGeofence?(
    organizationId: string,
    visitId: string,
    vehicleId: string,
    how: { at: Date; position: { lat: number; lng: number; accuracyM?: number }; userId: string },
  ): Promise<boolean>;
  now?: () => Date;
}

/** A position sample as a report hands it over (shared/domain/vehicles/positions.ts). */
export interface ReportedSample {
  at: string;
  lat: number;
  lng: number;
  accuracyM: number | null;
  speedKmh: number | null;
}

/**
 * The vehicle's next stop for geofence arrival: its EN_ROUTE visit, else its first ASSIGNED one in route
 * order; none while it is at a stop (an ARRIVED visit: leaving it is the driver's call). Visits no longer
 * this vehicle's are not on its route.
 */
export function nextStopOf(route: Pick<LiveRoute, "vehicleId" | "visitIds">, visits: readonly Visit[]): Visit | undefined {
  const byId = new Map(visits.map((visit) => [visit._id, visit]));
  const mine = route.visitIds.flatMap((id) => {
    const visit = byId.get(id);
    return visit && visit.assignedVehicleId === route.vehicleId ? [visit] : [];
  });
  if (mine.some((visit) => visit.status === "ARRIVED")) return undefined;
  return mine.find((visit) => visit.status === "EN_ROUTE") ?? mine.find((visit) => visit.status === "ASSIGNED");
}

/** Attempts of a progress refresh against concurrent ones (each re-reads and re-projects). */
const MAX_REFRESH_ATTEMPTS = 4;

interface Projected {
  input: ProjectionInput;
  projection: RouteProjection;
  configuration: RoutingConfiguration;
}

export function createLiveRoutes(ports: LiveRoutePorts) {
  const now = ports.now ?? (() => new Date());

  /** The projection input of a live route with a plan, from its visits, vehicle and profile as stored now. */
  async function projectionOf(
    organizationId: string,
    route: LiveRoute,
    vehicle: Vehicle,
    at: Date,
    observed: Record<string, ObservedStop>,
    reported?: Position,
  ): Promise<Projected | undefined> {
    const plan = route.plan;
    if (!plan) return undefined;
    const configuration = await ports.findConfiguration(organizationId, plan.configurationId);
    if (!configuration) return undefined;
    const visits = new Map((await ports.visitsOfHub(organizationId, route.hubId, route.visitIds)).map((visit) => [visit._id, visit]));
    const position = reported ?? (await ports.latestPosition(organizationId, vehicle._id));
    const input = projectionInputOf({ route, plan, vehicle, configuration, visits, position, at, observed });
    return { input, projection: projectRoute(input), configuration };
  }

  /** Arrives the vehicle's next stop when the track stopped there and its profile asks for it; true when it did. */
  async function arriveByGeofence(organizationId: string, vehicleId: string, userId: string, track: readonly ReportedSample[]) {
    const route = await ports.findLiveRoute(organizationId, vehicleId);
    if (!route?.plan || !ports.arriveByGeofence) return false;
    const configuration = await ports.findConfiguration(organizationId, route.plan.configurationId);
    if (!configuration?.autoArrival) return false;
    const next = nextStopOf(route, await ports.visitsOfHub(organizationId, route.hubId, route.visitIds));
    if (!next) return false;
    const sample = geofenceArrivalSample(track, next.coordinate, configuration.arrivalRadiusMeters);
    if (!sample) return false;
    return ports.arriveByGeofence(organizationId, next._id, vehicleId, {
      at: new Date(sample.at),
      position: { lat: sample.lat, lng: sample.lng, ...(sample.accuracyM !== null ? { accuracyM: sample.accuracyM } : {}) },
      userId,
    });
  }

  /**
   * Re-projects the vehicle's live route after a progress action (`observe`: the time it observed) or a
   * position (`position`: the projection's start) and records the progress state in one conditional
   * update of the live-route item, retried on a concurrent one. A position that announces nothing writes nothing.
   */
  async function reproject(
    organizationId: string,
    vehicleId: string,
    change: { observe?: { visitId: string; action: ProgressAction; at: Date }; position?: Position },
  ): Promise<void> {
    let vehicle: Vehicle | undefined;
    for (let attempt = 0; attempt < MAX_REFRESH_ATTEMPTS; attempt++) {
      const route = await ports.findLiveRoute(organizationId, vehicleId);
      if (!route?.plan || (change.observe && !route.visitIds.includes(change.observe.visitId))) return;
      vehicle ??= await ports.findVehicle(organizationId, vehicleId);
      if (!vehicle) return;
      const observed = { ...(route.progress?.observed ?? {}) };
      if (change.observe) {
        const { visitId, action, at } = change.observe;
        observed[visitId] = observationAfter(observed[visitId] ?? {}, action, at);
      }
      const time = now();
      const projected = await projectionOf(organizationId, route, vehicle, time, observed, change.position);
      if (!projected) return;
      const changes = etaChanges(route.progress?.eta ?? {}, projected.projection, plannedProjection(projected.input), {
        now: time,
        etaChangeMinutes: projected.configuration.etaChangeMinutes,
        timeZone: route.timeZone,
      });
      if (!change.observe && Object.keys(changes).length === 0) return;
      const progress: LiveProgress = {
        version: (route.progress?.version ?? 0) + 1,
        observed,
        eta: { ...(route.progress?.eta ?? {}), ...changes },
      };
      if (await ports.recordProgress(organizationId, vehicleId, route.resultId, route.progress?.version, progress)) return;
    }
  }

  return {
    /** GET /vehicle/{vehicleId}/route: the vehicle's current live route, projected now. Another organization's or hub's vehicle: 404. */
    async routeOf(caller: Caller, vehicleId: string): Promise<LiveRouteView> {
      const vehicle = await ports.findVehicle(caller.organizationId, vehicleId);
      if (!vehicle || !callerMayUseHub(caller, vehicle.hubId)) throw new NotFoundError();
      const empty: LiveRouteView = {
        vehicleId,
        routingResultId: null,
        stops: [],
        currentVisitId: null,
        position: null,
        projectedReturn: null,
        overtimeMinutes: 0,
        pace: null,
      };
      const route = await ports.findLiveRoute(caller.organizationId, vehicleId);
      if (!route) return empty;
      const projected = await projectionOf(caller.organizationId, route, vehicle, now(), route.progress?.observed ?? {});
      if (!projected) {
        // A route dispatched before live ETAs: its stops as planned, nothing projected.
        const visits = await ports.visitsOfHub(caller.organizationId, route.hubId, route.visitIds);
        const byId = new Map(visits.map((visit) => [visit._id, visit]));
        return {
          ...empty,
          routingResultId: route.resultId,
          stops: route.visitIds.map((visitId) => ({
            visitId,
            status: byId.get(visitId)?.status ?? "DELETED",
            plannedEta: byId.get(visitId)?.eta ?? null,
            projectedEta: null,
            projectedEtd: null,
            slackMinutes: null,
            risk: null,
          })),
        };
      }
      const { projection } = projected;
      return {
        vehicleId,
        routingResultId: route.resultId,
        stops: projection.stops,
        currentVisitId: projection.currentVisitId,
        position: projection.position,
        projectedReturn: projection.projectedReturn,
        overtimeMinutes: projection.overtimeMinutes,
        pace: projection.pace,
      };
    },

    /**
     * After a driver's progress action on `visit` (already written): records the time it observed on
     * the vehicle's live route, re-projects the route and stores the ETAs and risks that changed enough to
     * announce — one conditional update of the live-route item, whose stream record the publisher turns
     * into `visit.eta.changed` / `visit.risk.changed`. Nothing when the visit is not on a live route with a plan.
     */
    async progressRecorded(organizationId: string, visit: Visit, action: ProgressAction, at: Date): Promise<void> {
      if (visit.assignedVehicleId === null) return;
      await reproject(organizationId, visit.assignedVehicleId, { observe: { visitId: visit._id, action, at } });
    },

    /**
     * After a position report moved the vehicle's latest position (docs/api/execution.md, "Refresh on
     * positions"). `track`: the previous latest and the accepted samples, oldest first.
     * - Geofence arrival (the profile's `autoArrival`): when two consecutive samples are slow within
     *   `arrivalRadiusMeters` of the next stop, that visit is arrived on the driver's path (source
     *   `geofence`), which re-projects the route itself. A moving vehicle's report reads nothing for it.
     * - Otherwise, when the report claimed the minute's refresh (`refresh`), the route is re-projected from
     *   the new position and the ETA and risk changes are recorded as a progress action's are; nothing is
     *   written when nothing is to be announced.
     */
    async positionsReported(
      organizationId: string,
      vehicleId: string,
      userId: string,
      report: { track: readonly ReportedSample[]; refresh: boolean },
    ): Promise<void> {
      const latest = report.track.at(-1);
      if (!latest) return;
      if (
        ports.arriveByGeofence &&
        mayArriveByGeofence(report.track) &&
        (await arriveByGeofence(organizationId, vehicleId, userId, report.track))
      )
        return;
      if (report.refresh) await reproject(organizationId, vehicleId, { position: { lat: latest.lat, lng: latest.lng, at: latest.at } });
    },
  };
}

/**
 * The projection input of a live route with a plan, from what was read: its visits (by id; one missing is
 * skipped as deleted), the vehicle, the profile and the latest position. Pure: GET /vehicle/{id}/route, the
 * refresh after each progress action and the map of a dispatched result (map-live.ts) read, then ask this.
 */
export function projectionInputOf(args: {
  route: LiveRoute;
  plan: LivePlan;
  vehicle: Vehicle;
  configuration: RoutingConfiguration;
  visits: ReadonlyMap<string, Visit>;
  position: Position | undefined;
  at: Date;
  observed: Record<string, ObservedStop>;
}): ProjectionInput {
  const { route, plan, vehicle, configuration, visits, position, at, observed } = args;
  const departure = DateTime.fromMillis(Date.parse(plan.origin) + plan.departureMinutes * 60_000, { zone: route.timeZone });
  const shift = currentOrNextShift(vehicle, departure);
  const shifted = (order: number) => order + plan.firstTrip;
  return {
    plan: {
      ...plan,
      legs: [...new Array<number | undefined>(plan.firstTrip).fill(undefined), ...plan.legs],
      breaks: plan.breaks.map((entry) => ({ ...entry, afterOrder: shifted(entry.afterOrder) })),
    },
    timeZone: route.timeZone,
    stops: route.visitIds.map((visitId) => {
      const visit = visits.get(visitId);
      return {
        visitId,
        status: visit?.status ?? "DELETED",
        onRoute: visit !== undefined && visit.assignedVehicleId === route.vehicleId,
        plannedEta: visit?.eta ?? null,
        coordinate: visit?.coordinate ?? { lat: 0, lng: 0 },
        serviceMinutes: visit?.visitTime ?? configuration.defaultVisitTime,
        timeWindows: visit?.timeWindows ?? [],
        changedAt: visit?.lastTransition?.at ?? null,
        ...(observed[visitId] ? { observed: observed[visitId] } : {}),
      };
    }),
    now: at,
    position,
    speedKmh: vehicle.speed ?? configuration.defaultSpeed,
    roadFactor: configuration.roadFactor,
    shiftEnd: shift.end.toUTC().toISO() as string,
    atRiskMinutes: configuration.atRiskMinutes,
  };
}

/** The stop's observed times after an action: start (left for it), undo (did not), arrive, complete/fail (finished). */
export function observationAfter(previous: ObservedStop, action: ProgressAction, at: Date): ObservedStop {
  const time = at.toISOString();
  switch (action) {
    case "start":
      return { ...previous, startedAt: time };
    case "undo": {
      const { startedAt: _undone, ...rest } = previous;
      return rest;
    }
    case "arrive":
      return { ...previous, arrivedAt: time };
    case "complete":
    case "fail":
      return { ...previous, finishedAt: time };
  }
}

export type LiveRoutes = ReturnType<typeof createLiveRoutes>;
