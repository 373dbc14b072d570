import { describe, expect, it } from "vitest";
import type { Caller } from "#shared/domain/caller";
import { createLiveRoutes, type LiveRoutePorts, nextStopOf, type ReportedSample } from "#shared/domain/live/live-routes";
import { GEOFENCE_PAIR_MAX_MINUTES, geofenceArrivalSample, mayArriveByGeofence } from "#shared/domain/live/projection";
import type { LivePlan, LiveRoute } from "#shared/domain/runs/live-day";
import {
  createPositionService,
  emptyPositionState,
  LIVE_REFRESH_INTERVAL_SECONDS,
  liveRefreshDue,
  type PositionState,
  type PositionStore,
  type PositionsReported,
} from "#shared/domain/vehicles/positions";
import { profile, vehicle, visit } from "#test/unit/runs/plan-fixtures";

/**
 * Refresh on positions and geofence arrival (docs/api/execution.md, "Refresh on positions"): the
 * once-a-minute throttle claimed in the report's own state write, the geofence rule over a report's
 * track, the next stop, and which reads a report leads to.
 */
const t0 = new Date("2026-12-01T09:00:00.000Z");
const plus = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
const iso = (seconds: number) => plus(seconds).toISOString();

describe("Function: liveRefreshDue", () => {
  it.each([
    ["never refreshed", null, 0, true],
    ["1 s after the last claim", iso(0), 1, false],
    ["59.999 s after", iso(0), LIVE_REFRESH_INTERVAL_SECONDS - 0.001, false],
    ["exactly a minute after", iso(0), LIVE_REFRESH_INTERVAL_SECONDS, true],
    ["an hour after", iso(0), 3600, true],
    ["a clock that went back (cannot stall the refresh)", iso(120), 0, true],
    ["an unreadable stored time", "not a time", 0, true],
  ])("%s → %s", (_case, last, seconds, due) => {
    expect(liveRefreshDue(last, plus(seconds))).toBe(due);
  });
});

/** In-memory position store of one vehicle (the service's decisions without a table). */
function memoryStore() {
  let state: PositionState = emptyPositionState;
  const stored = new Set<string>();
  const store: PositionStore = {
    read: async () => ({ vehicle: { vehicleId: "veh-1", hubId: "hub-1", name: "Van", assignee: "driver" }, state }),
    storedTimes: async (_o, _v, ats) => new Set(ats.filter((at) => stored.has(at))),
    writeState: async (_o, _v, next) => {
      if (next.revision !== state.revision + 1) return false;
      state = next;
      return true;
    },
    appendHistory: async (_o, _v, samples) => {
      for (const sample of samples) stored.add(sample.at);
    },
    history: async () => ({ items: [], nextCursor: null }),
    vehicles: async () => ({ items: [], nextCursor: null }),
    latestOf: async () => new Map(),
  };
  return { store, state: () => state };
}

const caller: Caller = { userId: "driver", organizationId: "o", hubIds: [], permissions: new Set(), permissionDetails: [] };
const sample = (seconds: number, lat = -6.2) => ({ at: iso(seconds), lat, lng: 106.8, speedKmh: 30 });

describe("Positions: the live refresh is claimed at most once a minute per vehicle", () => {
  it("claims it in the report's own state write; reports within the minute pass the track without it; after the minute again", async () => {
    // Prepare
    const memory = memoryStore();
    let clock = plus(0);
    const calls: Array<{ refresh: boolean; track: string[] }> = [];
    const reported: PositionsReported = async (_caller, _vehicle, report) => {
      calls.push({ refresh: report.refresh, track: report.track.map((each) => each.at) });
    };
    const service = createPositionService(
      memory.store,
      async () => ({ granted: true }),
      () => clock,
      reported,
    );

    // Act
    await service.add(caller, "veh-1", { positions: [sample(-30)] });
    clock = plus(20);
    await service.add(caller, "veh-1", { positions: [sample(0), sample(10)] });
    clock = plus(40);
    await service.add(caller, "veh-1", { positions: [sample(10)] }); // a replay: duplicates only
    await service.add(caller, "veh-1", { positions: [sample(-20)] }); // stale only: the latest did not move
    clock = plus(60);
    await service.add(caller, "veh-1", { positions: [sample(50)] });

    // Assess
    expect(calls).toEqual([
      { refresh: true, track: [iso(-30)] },
      { refresh: false, track: [iso(-30), iso(0), iso(10)] },
      { refresh: true, track: [iso(10), iso(50)] },
    ]);
    // The claim lives on the state item the report writes anyway: no write of its own.
    expect(memory.state()).toMatchObject({ liveRefreshedAt: iso(60), revision: 4 });
  });
});

describe("Function: geofenceArrivalSample / mayArriveByGeofence", () => {
  const stop = { lat: -6.2, lng: 106.8 };
  const at = (lat: number, seconds: number, speedKmh: number | null) => ({ lat, lng: 106.8, at: iso(seconds), speedKmh });
  it("finds the first stop of a queued track where the vehicle stopped at the stop, not the last two samples only", () => {
    const track = [at(-6.21, 0, 30), at(-6.2003, 30, 3), at(-6.2002, 60, 1), at(-6.19, 90, 40)];
    expect(mayArriveByGeofence(track)).toBe(true);
    expect(geofenceArrivalSample(track, stop, 75)).toEqual(track[2]);
  });
  it("nothing for a moving vehicle, a stop elsewhere, or two slow samples further apart than a pair", () => {
    expect(mayArriveByGeofence([at(-6.21, 0, 30), at(-6.205, 30, 30)])).toBe(false);
    expect(geofenceArrivalSample([at(-6.21, 0, 0), at(-6.21, 30, 0)], stop, 75)).toBeUndefined();
    const gap = [at(-6.2001, 0, 0), at(-6.2001, GEOFENCE_PAIR_MAX_MINUTES * 60 + 1, 0)];
    expect(mayArriveByGeofence(gap)).toBe(false);
    expect(geofenceArrivalSample(gap, stop, 75)).toBeUndefined();
  });
  it("without reported speeds, by the distance between the samples", () => {
    const still = [at(-6.2001, 0, null), at(-6.2001, 30, null)];
    expect(geofenceArrivalSample(still, stop, 75)).toEqual(still[1]);
    expect(mayArriveByGeofence([at(-6.21, 0, null), at(-6.2001, 30, null)])).toBe(false);
  });
});

describe("Function: nextStopOf", () => {
  const route = { vehicleId: "veh-1", visitIds: ["a", "b", "c"] };
  const on = (id: string, status: string, vehicleId = "veh-1") => visit(id, { status: status as never, assignedVehicleId: vehicleId });
  it.each([
    ["the EN_ROUTE visit before any ASSIGNED one", [on("a", "DONE"), on("b", "ASSIGNED"), on("c", "EN_ROUTE")], "c"],
    ["else the first ASSIGNED in route order", [on("a", "FAILED"), on("b", "ASSIGNED"), on("c", "ASSIGNED")], "b"],
    ["not a visit another vehicle took", [on("a", "ASSIGNED", "veh-2"), on("b", "ASSIGNED"), on("c", "ASSIGNED")], "b"],
    ["none while the vehicle is at a stop", [on("a", "ARRIVED"), on("b", "ASSIGNED"), on("c", "ASSIGNED")], undefined],
    ["none when all are finished", [on("a", "DONE"), on("b", "DONE"), on("c", "CANCELLED")], undefined],
  ])("%s", (_case, visits, expected) => {
    expect(nextStopOf(route, visits)?._id).toBe(expected);
  });
});

describe("Method: positionsReported", () => {
  const plan = { configurationId: "conf-1" } as LivePlan;
  const liveRoute: LiveRoute = {
    vehicleId: "veh-1",
    hubId: "hub-1",
    resultId: "res-1",
    visitIds: ["a", "b"],
    departure: "2026-12-01 08:00",
    timeZone: "UTC",
    dispatchedTime: "2026-12-01 07:00:00",
    plan,
  };
  const stopB = { lat: -6.25, lng: 106.85 };
  function ports(autoArrival: boolean) {
    const reads: string[] = [];
    const arrivals: Array<{ visitId: string; at: string; position: unknown; userId: string }> = [];
    const read = <T>(what: string, answer: T): T => {
      reads.push(what);
      return answer;
    };
    const livePorts: LiveRoutePorts = {
      findLiveRoute: async () => read("liveRoute", liveRoute),
      findVehicle: async () => read("vehicle", vehicle()),
      findConfiguration: async () => read("configuration", profile({ autoArrival })),
      visitsOfHub: async () =>
        read("visits", [
          visit("a", { status: "DONE", assignedVehicleId: "veh-1" }),
          visit("b", { status: "ASSIGNED", assignedVehicleId: "veh-1", coordinate: stopB }),
        ]),
      latestPosition: async () => undefined,
      recordProgress: async () => true,
      arriveByGeofence: async (_o, visitId, _v, how) => {
        arrivals.push({ visitId, at: how.at.toISOString(), position: how.position, userId: how.userId });
        return true;
      },
    };
    return { live: createLiveRoutes(livePorts), reads, arrivals };
  }
  const point = (seconds: number, where: { lat: number; lng: number }, speedKmh: number): ReportedSample => ({
    at: iso(seconds),
    ...where,
    accuracyM: 5,
    speedKmh,
  });
  const moving = [point(0, { lat: -6.22, lng: 106.82 }, 30), point(30, { lat: -6.23, lng: 106.83 }, 30)];
  const stopped = [point(0, { lat: -6.2502, lng: 106.85 }, 2), point(30, { lat: -6.2501, lng: 106.85 }, 0)];

  it("a moving vehicle's report within the minute reads nothing", async () => {
    const { live, reads } = ports(true);
    await live.positionsReported("o", "veh-1", "driver", { track: moving, refresh: false });
    expect(reads).toEqual([]);
  });

  it("two slow samples at the next stop arrive it (the later sample's time and place, the reporting user)", async () => {
    const { live, arrivals } = ports(true);
    await live.positionsReported("o", "veh-1", "driver", { track: stopped, refresh: true });
    expect(arrivals).toEqual([{ visitId: "b", at: iso(30), position: { lat: -6.2501, lng: 106.85, accuracyM: 5 }, userId: "driver" }]);
  });

  it("nothing with the profile's autoArrival off, nor when stopped away from the next stop", async () => {
    const off = ports(false);
    await off.live.positionsReported("o", "veh-1", "driver", { track: stopped, refresh: false });
    expect(off.arrivals).toEqual([]);
    expect(off.reads).toEqual(["liveRoute", "configuration"]);
    const elsewhere = ports(true);
    const away = stopped.map((each) => ({ ...each, lat: each.lat + 0.01 }));
    await elsewhere.live.positionsReported("o", "veh-1", "driver", { track: away, refresh: false });
    expect(elsewhere.arrivals).toEqual([]);
  });
});
