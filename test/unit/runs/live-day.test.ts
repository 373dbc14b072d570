import { describe, expect, it } from "vitest";
import type { RoutingConfiguration } from "#shared/domain/configurations/schema";
import type { RoutingResultBody, RoutingResultRecord } from "#shared/domain/routing-results/schema";
import type { LiveRoute } from "#shared/domain/runs/live-day";
import type { RoutingRunMessage } from "#shared/domain/runs/messages";
import { processRunMessage, type RunClaimView, type RunWorkerPorts } from "#shared/domain/runs/run-worker";
import type { ScheduleRecord } from "#shared/domain/schedules/schema";
import type { Vehicle } from "#shared/domain/vehicles/schema";
import type { Visit, VisitStatus } from "#shared/domain/visits/schema";
import { solveRouting } from "#shared/routing/solver";
import { profile as planProfile, visit as planVisit } from "#test/unit/runs/plan-fixtures";

/**
 * Runs that respect the road: a schedule with two times a day (08:00 and 12:00, autoDispatch) over
 * in-memory ports that keep the visits, the live routes and the claims as the stores do; the solver is
 * the real one. The 12:00 run must plan around what 08:00 dispatched.
 */
const day = "2026-03-02";
const at = (time: string) => new Date(`${day}T${time}:00Z`);

const schedule: ScheduleRecord = {
  _id: "sched-1",
  name: "Twice a day",
  configurationId: "conf-1",
  periode: "daily",
  schedules: [{ time: ["08:00", "12:00"] }],
  startTime: "2020-01-01 00:00",
  endTime: "2099-12-31 23:59",
  frequency: null,
  interval: null,
  autoDispatch: true,
  active: true,
  timeSchedules: ["08:00", "12:00"],
  nextRunAt: null as never,
  organizationId: "o",
  createdBy: "u",
  createdTime: "2026-01-01 00:00:00",
  updatedTime: "2026-01-01 00:00:00",
};

// The plan fixtures' profile (test/unit/runs/plan-fixtures.ts) with this file's settings.
const configuration = planProfile({
  defaultVisitTime: 10,
  objective: "distance",
  roadFactor: 1.3,
  createdTime: "x",
  updatedTime: "x",
});

const van = (id: string, kg: number, shift = { startTime: "07:00", endTime: "19:00" }): Vehicle => ({
  _id: id,
  name: id,
  type: "car",
  plateNumber: null,
  hubId: "hub-1",
  assignee: null,
  capacity: { weight: { max: kg } },
  speed: 30,
  workingTime: { ...shift, multiday: 0 },
  breakTime: null,
  tags: [],
  fixedCost: 0,
  startLocation: null,
  endLocation: null,
  constraints: {},
  organizationId: "o",
  createdTime: "x",
  updatedTime: "x",
});

const visit = (id: string, i: number): Visit =>
  planVisit(id, {
    name: id,
    coordinate: { lat: -6.2 + 0.004 * ((i % 5) + 1), lng: 106.8 + 0.004 * Math.floor(i / 5) },
    visitTime: 5,
    capacity: { weight: 10 },
    createdTime: "x",
    updatedTime: "x",
  });

/** A hub's world as the stores keep it, and a worker over it. */
function world(vehicles: Vehicle[], profile: Partial<RoutingConfiguration> = {}) {
  const visits = new Map<string, Visit>();
  const liveRoutes = new Map<string, LiveRoute>();
  const claims = new Map<string, RunClaimView>();
  const results = new Map<string, RoutingResultRecord>();
  const bodies = new Map<string, RoutingResultBody>();
  let clock = at("08:00");
  const ports: RunWorkerPorts = {
    now: () => clock,
    appTimeZone: "UTC",
    readClaim: async (_o, _s, slot) => claims.get(slot) ?? { status: "ENQUEUED", resultId: null, attempts: 0 },
    startClaim: async (_o, _s, slot, proposed) => {
      const claim = { status: "RUNNING" as const, resultId: proposed, attempts: 1 };
      claims.set(slot, claim);
      return claim;
    },
    finishClaim: async (_o, _s, slot, status) => void claims.set(slot, { ...(claims.get(slot) as RunClaimView), status }),
    findSchedule: async () => schedule,
    recordLogExecuted: async () => undefined,
    findConfiguration: async () => ({ ...configuration, ...profile }),
    findHub: async () => ({
      _id: "hub-1",
      name: "Depot",
      address: "x",
      lat: -6.2,
      lng: 106.8,
      timeZone: null,
      organizationId: "o",
      createdTime: "x",
      updatedTime: "x",
    }),
    vehiclesForRun: async () => vehicles,
    oldestActiveVisits: async (_o, _h, max) =>
      [...visits.values()]
        .filter((v) => v.status === "UNASSIGNED" || v.status === "ONGOING")
        .sort((a, b) => a._id.localeCompare(b._id))
        .slice(0, max),
    liveRoutes: async () => [...liveRoutes.values()],
    visitsByIds: async (_o, _h, ids) => ids.flatMap((id) => (visits.has(id) ? [visits.get(id) as Visit] : [])),
    recordLiveRoutes: async (_o, routes) => {
      for (const route of routes) liveRoutes.set(route.vehicleId, route);
    },
    solve: (problem, options) => solveRouting(problem, { ...options, timeLimitMs: Infinity, maxIterations: 2_000 }),
    results: {
      insert: async (result) => void results.set(result._id, result),
      upsertOngoing: async (result) => void results.set(result._id, result),
      find: async (_o, id) => results.get(id),
      readBody: async (_o, id) => bodies.get(id) as never,
      complete: async (_o, id, body, changes) => {
        bodies.set(id, body);
        results.set(id, { ...(results.get(id) as RoutingResultRecord), status: "done", summary: changes.summary });
        return true;
      },
      fail: async () => true,
      recordDispatch: async () => undefined,
      list: async () => ({ items: [], nextCursor: null }),
    },
    // The store's conditional update: active visits, or a pinned one still ASSIGNED to that vehicle under that result.
    markVisitDispatched: async (_o, _h, visitId, dispatch, _time, _by, pinnedFrom) => {
      const stored = visits.get(visitId);
      if (!stored) return false;
      const active = stored.status === "UNASSIGNED" || stored.status === "ONGOING";
      const pinned =
        pinnedFrom !== undefined &&
        stored.status === "ASSIGNED" &&
        stored.routingResultId === pinnedFrom &&
        stored.assignedVehicleId === dispatch.assignedVehicleId;
      if (!active && !pinned) return false;
      visits.set(visitId, { ...stored, status: "ASSIGNED", ...dispatch });
      return true;
    },
    visitRoutingResultId: async (_o, _h, visitId) => visits.get(visitId)?.routingResultId ?? null,
    releaseActiveRun: async () => undefined,
    runQuotaRefusal: async () => undefined,
    meterRun: async () => true,
    memoryMb: () => 2048,
    roadMatrix: async () => undefined,
  };
  const runAt = async (time: string) => {
    clock = at(time);
    const message: RoutingRunMessage = {
      kind: "schedule",
      organizationId: "o",
      scheduleId: "sched-1",
      slot: `${day}T${time}Z`,
      scheduledFor: at(time).toISOString(),
      scheduleUpdatedTime: schedule.updatedTime,
    };
    const outcome = await processRunMessage(ports, message, { receiveCount: 1, maxReceiveCount: 3, remainingTimeMs: () => 300_000 });
    expect(outcome.outcome).toBe("done");
    return bodies.get((outcome as { resultId: string }).resultId) as RoutingResultBody;
  };
  const add = (prefix: string, count: number, from = visits.size) =>
    Array.from({ length: count }, (_, i) => {
      const created = visit(`${prefix}${String(i).padStart(2, "0")}`, from + i);
      visits.set(created._id, created);
      return created._id;
    });
  const set = (id: string, status: VisitStatus, lastAt?: string) => {
    const stored = visits.get(id) as Visit;
    visits.set(id, {
      ...stored,
      status,
      lastTransition: lastAt
        ? {
            from: stored.status,
            to: status,
            at: at(lastAt).toISOString(),
            source: "driver",
            userId: "d",
            position: null,
            failureReason: null,
            notes: null,
            proofIds: [],
            version: 2,
            vehicleId: null,
            routingResultId: null,
          }
        : stored.lastTransition,
    });
  };
  return { visits, liveRoutes, runAt, add, set };
}

const onVehicle = (visits: Map<string, Visit>, vehicleId: string, ids: string[]) =>
  ids.filter((id) => visits.get(id)?.status === "ASSIGNED" && visits.get(id)?.assignedVehicleId === vehicleId);

// Each test runs the optimizer two to four times (a second each when the machine is idle, several when loaded).
describe("Runs that respect the road", { timeout: 60_000 }, () => {
  it("1 vehicle of 100 kg with 8 × 10 kg dispatched at 08:00: the 12:00 run puts at most 2 of 5 new 10 kg visits on it, and keeps the 8", async () => {
    const w = world([van("veh-1", 100)]);
    const morning = w.add("a", 8);
    await w.runAt("08:00");
    expect(onVehicle(w.visits, "veh-1", morning)).toHaveLength(8);
    const morningResult = w.visits.get(morning[0] as string)?.routingResultId;

    const added = w.add("b", 5);
    const noon = await w.runAt("12:00");
    const route = noon.routes.find((r) => r.vehicleId === "veh-1");
    const load = route?.trips.reduce((sum, trip) => sum + ((w.visits.get(trip.visitId)?.capacity.weight as number) ?? 0), 0) ?? 0;
    expect(load).toBeLessThanOrEqual(100);
    expect(onVehicle(w.visits, "veh-1", added).length).toBeLessThanOrEqual(2);
    // Not vacuous: the van does take the room it has left.
    expect(onVehicle(w.visits, "veh-1", added).length).toBe(2);
    // The morning's visits never left their vehicle: re-sequenced under the new result.
    expect(onVehicle(w.visits, "veh-1", morning)).toHaveLength(8);
    for (const trip of route?.trips ?? []) if (morning.includes(trip.visitId)) expect(trip.pinnedFromResultId).toBe(morningResult);
    expect(w.liveRoutes.get("veh-1")?.visitIds.filter((id) => added.includes(id)).length).toBeLessThanOrEqual(2);
  });

  it("starts a vehicle from its committed stop at 12:00, keeps its finished stops off the new plan, and puts new stops after it", async () => {
    const w = world([van("veh-1", 200)]);
    const morning = w.add("a", 6);
    await w.runAt("08:00");
    const order = w.liveRoutes.get("veh-1")?.visitIds as string[];
    w.set(order[0] as string, "DONE", "09:00");
    w.set(order[1] as string, "DONE", "11:40");
    w.set(order[2] as string, "ARRIVED", "11:58");
    const added = w.add("b", 3);
    const noon = await w.runAt("12:00");
    const route = noon.routes.find((r) => r.vehicleId === "veh-1");
    const planned = route?.trips.map((trip) => trip.visitId) ?? [];
    expect(planned).not.toContain(order[0]);
    expect(planned).not.toContain(order[2]);
    expect(route?.servedVisitIds).toEqual(order.slice(0, 3));
    // The van leaves the arrived stop after its 5-minute service, not the hub at noon.
    expect((route?.departure ?? "") >= "2026-03-02 12:03").toBe(true);
    expect(planned.filter((id) => morning.includes(id)).sort()).toEqual(order.slice(3).sort());
    expect(onVehicle(w.visits, "veh-1", added)).toHaveLength(3);
    // The next live route keeps the day's history first.
    expect(w.liveRoutes.get("veh-1")?.visitIds.slice(0, 3)).toEqual(order.slice(0, 3));
  });

  it("scheduled runs follow the profile's live-day settings: liveDayAssigned free releases a van's visits while it is at the hub", async () => {
    const w = world([van("veh-1", 100)], { liveDayAssigned: "free" });
    const morning = w.add("a", 8);
    await w.runAt("08:00");
    const morningResult = w.visits.get(morning[0] as string)?.routingResultId;
    w.add("b", 5);
    const noon = await w.runAt("12:00");
    const kept = noon.routes.flatMap((route) => route.trips).filter((trip) => morning.includes(trip.visitId));
    // Nothing of the van is loaded (no stop started): every morning visit is planned as free work, none pinned.
    expect(kept.length).toBeGreaterThan(0);
    for (const trip of kept) {
      expect(trip.releasedFromResultId).toBe(morningResult);
      expect(trip.pinnedFromResultId).toBeUndefined();
    }
  });

  it("scheduled runs follow the profile's live-day settings: liveDayUseIdleVehicles false keeps a van with no route out", async () => {
    const plan = async (profile: Partial<RoutingConfiguration>) => {
      const vehicles = [van("veh-1", 100)];
      const w = world(vehicles, profile);
      w.add("a", 8);
      await w.runAt("08:00");
      vehicles.push(van("veh-2", 100)); // joins the hub after the morning dispatch: no route today
      w.add("b", 5);
      return (await w.runAt("12:00")).routes.filter((route) => route.trips.length > 0).map((route) => route.vehicleId);
    };
    expect(await plan({ liveDayUseIdleVehicles: false })).toEqual(["veh-1"]);
    // Not vacuous: by default the idle van takes what the first cannot carry.
    expect((await plan({})).sort()).toEqual(["veh-1", "veh-2"]);
  });

  it("leaves out a vehicle whose dispatched shift ended while another's day is still live", async () => {
    const early = van("veh-early", 100, { startTime: "07:00", endTime: "11:00" });
    const late = van("veh-late", 100, { startTime: "07:00", endTime: "19:00" });
    const w = world([early, late]);
    w.add("a", 4);
    await w.runAt("08:00");
    expect(w.liveRoutes.size).toBeGreaterThanOrEqual(1);
    // Make sure both vehicles have a live route (the morning plan may use one van).
    for (const vehicle of ["veh-early", "veh-late"])
      if (!w.liveRoutes.has(vehicle))
        w.liveRoutes.set(vehicle, {
          vehicleId: vehicle,
          hubId: "hub-1",
          resultId: "000000000000000000000000",
          visitIds: [],
          departure: "2026-03-02 07:00",
          timeZone: "UTC",
          dispatchedTime: "x",
        });
    w.add("b", 3, 10);
    const noon = await w.runAt("12:00");
    expect(noon.routes.map((r) => r.vehicleId)).not.toContain("veh-early");
  });
});
