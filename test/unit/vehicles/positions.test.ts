import { describe, expect, it } from "vitest";
import type { Caller } from "#shared/domain/caller";
import { ValidationError } from "#shared/domain/errors";
import {
  assertSampleTimes,
  createPositionService,
  distinctSamples,
  emptyPositionState,
  POSITION_ALLOWANCE_CHUNK,
  POSITION_RATE,
  PositionQuotaExceededError,
  type PositionState,
  type PositionStore,
  type SampleReservation,
  rateDecision,
  splitByLatest,
  type VehiclePosition,
} from "#shared/domain/vehicles/positions";

const now = new Date("2026-11-27T10:00:30.000Z");
const at = (secondsAgo: number) => new Date(now.getTime() - secondsAgo * 1000).toISOString();
const point = (time: string): VehiclePosition => ({ at: time, lat: 1, lng: 2, accuracyM: null, speedKmh: null, headingDeg: null });

describe("Positions: pure rules", () => {
  it("assertSampleTimes: a 400 naming each sample outside [now − 24 h, now + 60 s]; the edges are inside", () => {
    expect(() =>
      assertSampleTimes(
        [
          { at: at(24 * 3600), lat: 0, lng: 0 },
          { at: at(-60), lat: 0, lng: 0 },
        ],
        now,
      ),
    ).not.toThrow();
    try {
      assertSampleTimes(
        [
          { at: at(1), lat: 0, lng: 0 },
          { at: at(24 * 3600 + 1), lat: 0, lng: 0 },
          { at: at(-61), lat: 0, lng: 0 },
        ],
        now,
      );
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).errors.map((issue) => issue.field)).toEqual(["positions.1.at", "positions.2.at"]);
    }
  });

  it("distinctSamples: one sample per instant (any notation), oldest first, the repeats counted", () => {
    const { samples, repeated } = distinctSamples([
      { at: "2026-11-27T10:00:10Z", lat: 1, lng: 1 },
      { at: "2026-11-27T10:00:00.000+00:00", lat: 2, lng: 2 },
      { at: "2026-11-27T11:00:10+01:00", lat: 3, lng: 3 },
    ]);
    expect(samples.map((sample) => [sample.at, sample.lat])).toEqual([
      ["2026-11-27T10:00:00.000Z", 2],
      ["2026-11-27T10:00:10.000Z", 1],
    ]);
    expect(repeated).toBe(1);
  });

  it("rateDecision: counts reports in the fixed window and refuses the one past the limit until the window ends", () => {
    const window = Math.floor(now.getTime() / 1000 / POSITION_RATE.windowSeconds) * POSITION_RATE.windowSeconds;
    expect(rateDecision(emptyPositionState, now)).toEqual({ allowed: true, window, count: 1 });
    const full: PositionState = { ...emptyPositionState, rateWindow: window, rateCount: POSITION_RATE.requests };
    expect(rateDecision(full, now)).toEqual({ allowed: false, retryAfterSeconds: 30 });
    // The previous window's count does not carry over.
    expect(rateDecision({ ...full, rateWindow: window - POSITION_RATE.windowSeconds }, now)).toEqual({ allowed: true, window, count: 1 });
  });

  it("splitByLatest: samples newer than the latest are accepted (the newest becomes the latest), the others stale", () => {
    const latest = point(at(50));
    expect(splitByLatest([point(at(60)), point(at(40)), point(at(30))], latest)).toEqual({
      accepted: [point(at(40)), point(at(30))],
      stale: 1,
      newest: point(at(30)),
    });
    expect(splitByLatest([point(at(60))], latest)).toEqual({ accepted: [], stale: 1, newest: latest });
    expect(splitByLatest([point(at(60))], null)).toEqual({ accepted: [point(at(60))], stale: 0, newest: point(at(60)) });
  });
});

/** An in-memory store: the service's decisions (retry on a lost write, allowance, reservations) without a table. */
function memoryStore(options: { loseWrites?: number } = {}) {
  let state: PositionState = emptyPositionState;
  const history = new Map<string, VehiclePosition>();
  let toLose = options.loseWrites ?? 0;
  const store: PositionStore = {
    read: async () => ({ vehicle: { vehicleId: "v", hubId: "h", name: "Van", assignee: "driver" }, state }),
    storedTimes: async (_o, _v, ats) => new Set(ats.filter((time) => history.has(time))),
    writeState: async (_o, _v, next) => {
      if (toLose > 0) {
        // Another report of the vehicle wrote first: its revision moved on.
        toLose -= 1;
        state = { ...state, revision: state.revision + 1 };
        return false;
      }
      if (next.revision !== state.revision + 1) return false;
      state = next;
      return true;
    },
    appendHistory: async (_o, _v, samples) => {
      for (const sample of samples) history.set(sample.at, sample);
    },
    history: async () => ({ items: [], nextCursor: null }),
    vehicles: async () => ({ items: [], nextCursor: null }),
    latestOf: async () => new Map(),
  };
  return { store, history, state: () => state };
}

const caller: Caller = { userId: "driver", organizationId: "o", hubIds: [], permissions: new Set(), permissionDetails: [] };
const batch = (...secondsAgo: number[]) => ({ positions: secondsAgo.map((s) => ({ at: at(s), lat: 1, lng: 2 })) });

describe("Positions: the report's allowance and retries", () => {
  it("reserves a chunk on the month's counter once, then spends it from the vehicle's state", async () => {
    const reservations: number[] = [];
    const reserve: SampleReservation = async (_o, _m, amount) => {
      reservations.push(amount);
      return { granted: true };
    };
    const memory = memoryStore();
    const service = createPositionService(memory.store, reserve, () => now);
    for (let i = 0; i < 10; i++) await service.add(caller, "v", batch(100 - i));
    expect(reservations).toEqual([POSITION_ALLOWANCE_CHUNK]);
    expect(memory.state()).toMatchObject({ allowance: POSITION_ALLOWANCE_CHUNK - 10, allowanceMonth: "2026-11", rateCount: 10 });
  });

  it("near the cap reserves exactly what the report needs, and refuses what does not fit (nothing written)", async () => {
    let left = 3;
    const reserve: SampleReservation = async (_o, _m, amount) => {
      if (amount > left) return { granted: false, used: 100 - left, cap: 100, plan: "p" };
      left -= amount;
      return { granted: true };
    };
    const memory = memoryStore();
    const service = createPositionService(memory.store, reserve, () => now);
    await expect(service.add(caller, "v", batch(9, 8, 7, 6))).rejects.toBeInstanceOf(PositionQuotaExceededError);
    expect(memory.history.size).toBe(0);
    expect(await service.add(caller, "v", batch(9, 8, 7))).toEqual({ accepted: 3, duplicates: 0, stale: 0 });
    expect(left).toBe(0);
  });

  it("a report that lost its write to another re-reads and retries, keeping what it reserved (no second reservation)", async () => {
    const reservations: number[] = [];
    const reserve: SampleReservation = async (_o, _m, amount) => {
      reservations.push(amount);
      return { granted: true };
    };
    const memory = memoryStore({ loseWrites: 2 });
    const service = createPositionService(memory.store, reserve, () => now);
    expect(await service.add(caller, "v", batch(5))).toEqual({ accepted: 1, duplicates: 0, stale: 0 });
    expect(reservations).toEqual([POSITION_ALLOWANCE_CHUNK]);
    expect(memory.state().allowance).toBe(POSITION_ALLOWANCE_CHUNK - 1);
  });

  it("a report of only duplicates writes nothing and is not counted against the rate", async () => {
    const memory = memoryStore();
    const service = createPositionService(
      memory.store,
      async () => ({ granted: true }),
      () => now,
    );
    await service.add(caller, "v", batch(5, 4));
    const before = memory.state();
    expect(await service.add(caller, "v", batch(5, 4, 4))).toEqual({ accepted: 0, duplicates: 3, stale: 0 });
    expect(memory.state()).toBe(before);
  });
});
