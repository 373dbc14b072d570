import { DateTime } from "luxon";
import { type Caller, callerMayUseHub } from "#shared/domain/caller";
import type { RoutingConfiguration } from "#shared/domain/configurations/schema";
import { NotFoundError } from "#shared/domain/errors";
import {
  etaChanges,
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
  /** The vehicle's latest position sample (the positions stream fills it; undefined until then). */
  latestPosition(organizationId: string, vehicleId: string): Promise<Position | undefined>;
  /** One conditional write of the route's progress state; false when the route or its state changed since read. */
  recordProgress(
    organizationId: string,
    vehicleId: string,
    resultId: string,
    readVersion: number | undefined,
    progress: LiveProgress,
  ): Promise<boolean>;
  now?: () => Date;
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
  ): Promise<Projected | undefined> {
    const plan = route.plan;
    if (!plan) return undefined;
    const configuration = await ports.findConfiguration(organizationId, plan.configurationId);
    if (!configuration) return undefined;
    const visits = new Map((await ports.visitsOfHub(organizationId, route.hubId, route.visitIds)).map((visit) => [visit._id, visit]));
    const position = await ports.latestPosition(organizationId, vehicle._id);
    const input = projectionInputOf({ route, plan, vehicle, configuration, visits, position, at, observed });
    return { input, projection: projectRoute(input), configuration };
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
      const vehicleId = visit.assignedVehicleId;
      if (vehicleId === null) return;
      let vehicle: Vehicle | undefined;
      for (let attempt = 0; attempt < MAX_REFRESH_ATTEMPTS; attempt++) {
        const route = await ports.findLiveRoute(organizationId, vehicleId);
        if (!route?.plan || !route.visitIds.includes(visit._id)) return;
        vehicle ??= await ports.findVehicle(organizationId, vehicleId);
        if (!vehicle) return;
        const observed = { ...(route.progress?.observed ?? {}) };
        observed[visit._id] = observationAfter(observed[visit._id] ?? {}, action, at);
        const time = now();
        const projected = await projectionOf(organizationId, route, vehicle, time, observed);
        if (!projected) return;
        const changes = etaChanges(route.progress?.eta ?? {}, projected.projection, plannedProjection(projected.input), {
          now: time,
          etaChangeMinutes: projected.configuration.etaChangeMinutes,
          timeZone: route.timeZone,
        });
        const progress: LiveProgress = {
          version: (route.progress?.version ?? 0) + 1,
          observed,
          eta: { ...(route.progress?.eta ?? {}), ...changes },
        };
        if (await ports.recordProgress(organizationId, vehicleId, route.resultId, route.progress?.version, progress)) return;
      }
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
