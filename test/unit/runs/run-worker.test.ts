import { describe, expect, it } from "vitest";
import type { RoutingResultBody, RoutingResultRecord } from "#shared/domain/routing-results/schema";
import type { RoutingRunMessage } from "#shared/domain/runs/messages";
import {
  BUDGET_MARGIN_MS,
  EXPLAIN_CAP_MS,
  type LogExecuted,
  MIN_SOLVE_MS,
  STORE_RESERVE_MS,
  type PlanRejection,
  processRunMessage,
  runSeed,
  type RunClaimView,
  type RunWorkerPorts,
  shouldRetry,
} from "#shared/domain/runs/run-worker";
import type { ScheduleRecord } from "#shared/domain/schedules/schema";
import type { RoutingProblem, RoutingSolution, SolveOptions } from "#shared/routing/model";
import { locationKey } from "#shared/routing/matrix";
import { TravelMatrixError } from "#shared/domain/travel/road-matrix";
import { solveRouting } from "#shared/routing/solver";
import type { RunUsage } from "#shared/domain/usage/schema";
import { profile } from "#test/unit/runs/plan-fixtures";

const now = new Date("2026-03-02T06:00:30Z");

const schedule: ScheduleRecord = {
  _id: "sched-1",
  name: "Morning run",
  configurationId: "conf-1",
  periode: "daily",
  schedules: [{ time: ["06:00"] }],
  startTime: "2020-01-01 00:00",
  endTime: "2099-12-31 23:59",
  frequency: null,
  interval: null,
  autoDispatch: true,
  active: true,
  timeSchedules: ["06:00"],
  nextRunAt: "2026-03-03T06:00:00.000Z",
  organizationId: "o",
  createdBy: "u",
  createdTime: "2026-01-01 00:00:00",
  updatedTime: "2026-01-01 00:00:00",
};

// The plan fixtures' profile (test/unit/runs/plan-fixtures.ts) with this file's settings.
const configuration = profile({
  defaultVisitTime: 10,
  capacityConstraint: { weight: true, volume: true },
  objective: "distance",
  timeLimitSeconds: 20,
  roadFactor: 1.3,
  createdTime: "x",
  updatedTime: "x",
});

const message: RoutingRunMessage = {
  kind: "schedule",
  organizationId: "o",
  scheduleId: "sched-1",
  slot: "2026-03-02T06:00Z",
  scheduledFor: "2026-03-02T06:00:00.000Z",
  scheduleUpdatedTime: "2026-01-01 00:00:00",
};

const delivery = (receiveCount = 1, remainingMs = 300_000) => ({ receiveCount, maxReceiveCount: 3, remainingTimeMs: () => remainingMs });

/** In-memory ports: one hub with one all-day vehicle and two visits near the depot. */
function setup(
  overrides: Partial<RunWorkerPorts> = {},
  claim: RunClaimView | undefined = { status: "ENQUEUED", resultId: null, attempts: 0 },
) {
  const state = {
    claim,
    logs: [] as LogExecuted[],
    results: new Map<string, RoutingResultRecord>(),
    dispatched: [] as string[],
    /** visit id → the result that dispatched it (what the visit item's routingResultId holds). */
    assignedBy: new Map<string, string>(),
    bodies: new Map<string, unknown>(),
    solves: 0,
    solveOptions: [] as SolveOptions[],
    /** Run keys whose slot of the organization's cap was freed. */
    released: [] as string[],
    /** Run usage items by run id (the store's conditional put: the first one wins). */
    metered: new Map<string, RunUsage>(),
  };
  const ports: RunWorkerPorts = {
    now: () => now,
    appTimeZone: "UTC",
    readClaim: async () => state.claim && { ...state.claim },
    startClaim: async (_o, _s, _slot, proposed) => {
      if (!state.claim || !["ENQUEUED", "SENT", "FAILED"].includes(state.claim.status)) return undefined;
      state.claim = { status: "RUNNING", resultId: state.claim.resultId ?? proposed, attempts: state.claim.attempts + 1 };
      return { ...state.claim };
    },
    finishClaim: async (_o, _s, _slot, status) => {
      if (state.claim) state.claim = { ...state.claim, status };
    },
    findSchedule: async () => schedule,
    recordLogExecuted: async (_o, _s, log) => void state.logs.push(log),
    findConfiguration: async () => configuration,
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
    vehiclesForRun: async () => [
      {
        _id: "veh-1",
        name: "Van",
        type: "car",
        plateNumber: null,
        hubId: "hub-1",
        assignee: null,
        capacity: {},
        speed: 30,
        workingTime: { startTime: "00:00", endTime: "23:59", multiday: 0 },
        breakTime: null,
        tags: [],
        fixedCost: 0,
        startLocation: null,
        endLocation: null,
        constraints: {},
        organizationId: "o",
        createdTime: "x",
        updatedTime: "x",
      },
    ],
    liveRoutes: async () => [],
    visitsByIds: async () => [],
    recordLiveRoutes: async () => undefined,
    oldestActiveVisits: async () =>
      ["v1", "v2"].map((id, i) => ({
        _id: id,
        hubId: "hub-1",
        name: id,
        address: null,
        coordinate: { lat: -6.2 + 0.01 * (i + 1), lng: 106.8 },
        timeWindows: [],
        visitTime: null,
        capacity: {},
        tags: [],
        status: "UNASSIGNED" as const,
        priority: 3,
        pickupVisitId: null,
        assignedVehicleId: null,
        routingResultId: null,
        routePlannedOrder: null,
        eta: null,
        etd: null,
        attempts: 0,
        failureReason: null,
        lastTransition: null,
        requirements: { photo: false, signature: false, notes: false },
        proofs: [],
        organizationId: "o",
        createdTime: "x",
        updatedTime: "x",
      })),
    solve: (problem, options) => {
      state.solves++;
      state.solveOptions.push(options);
      return solveRouting(problem, { ...options, timeLimitMs: Infinity, maxIterations: 20 });
    },
    results: {
      insert: async (result) => void state.results.set(result._id, result),
      upsertOngoing: async (result) => void state.results.set(result._id, result),
      find: async (_o, id) => state.results.get(id),
      readBody: async (_o, id) => state.bodies.get(id) as never,
      complete: async (_o, id, body, changes) => {
        const result = state.results.get(id);
        if (!result || result.status === "done") return false;
        state.bodies.set(id, body);
        state.results.set(id, { ...result, status: "done", summary: changes.summary });
        return true;
      },
      fail: async (_o, id, text) => {
        const result = state.results.get(id);
        if (!result || result.status === "done") return false; // like the store: a done result stays done
        state.results.set(id, { ...result, status: "failed", message: text });
        return true;
      },
      recordDispatch: async () => undefined,
      list: async () => ({ items: [], nextCursor: null }),
    },
    markVisitDispatched: async (_o, _h, visitId, dispatch) => {
      if (state.assignedBy.has(visitId)) return false; // no longer active (conditional update)
      state.assignedBy.set(visitId, dispatch.routingResultId ?? "");
      state.dispatched.push(visitId);
      return true;
    },
    visitRoutingResultId: async (_o, _h, visitId) => state.assignedBy.get(visitId) ?? null,
    releaseActiveRun: async (_o, runKey) => void state.released.push(runKey),
    runQuotaRefusal: async () => undefined,
    meterRun: async (usage) => {
      if (state.metered.has(usage.runId)) return false;
      state.metered.set(usage.runId, usage);
      return true;
    },
    memoryMb: () => 2048,
    roadMatrix: async () => undefined,
    ...overrides,
  };
  return { ports, state };
}

describe("Domain: routing run worker", () => {
  it("runs a claimed slot: result named after the schedule and slot, dispatch, SUCCESS, claim DONE", async () => {
    const { ports, state } = setup();
    const outcome = await processRunMessage(ports, message, delivery());
    expect(outcome).toMatchObject({ outcome: "done", dispatched: { success: 2, failed: 0 } });
    const [result] = [...state.results.values()];
    expect(result).toMatchObject({
      name: "Morning run - 2026-03-02 06:00",
      createdFrom: "SCHEDULER",
      status: "done",
      scheduleId: "sched-1",
    });
    expect(state.dispatched.sort()).toEqual(["v1", "v2"]);
    expect(state.logs).toEqual([
      expect.objectContaining({
        status: "SUCCESS",
        routingResultId: result?._id,
        dispatched: { success: 2, failed: 0 },
        lastExecute: "2026-03-02 06:00:30",
      }),
    ]);
    expect(state.claim?.status).toBe("DONE");
  });

  it("gives the optimizer min(profile time limit, remaining Lambda time − margin)", async () => {
    const roomy = setup();
    await processRunMessage(roomy.ports, message, delivery(1, 300_000));
    expect(roomy.state.solveOptions[0]).toMatchObject({ timeLimitMs: 20_000, objective: "distance" });
    const tight = setup();
    await processRunMessage(tight.ports, message, delivery(1, 40_000));
    expect(tight.state.solveOptions[0]?.timeLimitMs).toBe(10_000);
  });

  it("plans with the provider's road matrix, takes the matrix time out of the optimizer's budget and meters its elements", async () => {
    const asked: { provider: string; points: number; deadline: string }[] = [];
    // The worker's clock, injected: the matrix takes 1.2 s of it.
    let clock = now.getTime();
    const { ports, state } = setup({
      now: () => new Date(clock),
      findConfiguration: async () => ({ ...configuration, travelProvider: "city-osrm" }),
      roadMatrix: async (request) => {
        asked.push({ provider: request.provider, points: request.locations.length, deadline: request.deadline.toISOString() });
        clock += 1_200;
        const keys = [...new Set(request.locations.map(locationKey))];
        const n = keys.length;
        const seconds = Float32Array.from({ length: n * n }, (_, k) => (k % (n + 1) === 0 ? 0 : 600 + k));
        const metres = Float32Array.from({ length: n * n }, (_, k) => (k % (n + 1) === 0 ? 0 : 5_000 + 10 * k));
        return {
          kind: "osrm",
          matrix: {
            spec: { kind: "matrix", keys, durationsSeconds: seconds, distancesMetres: metres },
            elementsRequested: n * n,
            elementsCached: 0,
            requests: 1,
          },
        };
      },
    });
    expect((await processRunMessage(ports, message, delivery(1, 300_000))).outcome).toBe("done");
    // Two visits, the vehicle's start and end; the matrix's deadline is the budget (20 s) less the optimizer's minimum.
    expect(asked).toEqual([{ provider: "city-osrm", points: 4, deadline: new Date(now.getTime() + 20_000 - MIN_SOLVE_MS).toISOString() }]);
    expect(state.solveOptions[0]?.timeLimitMs).toBe(20_000 - 1_200);
    const [result] = [...state.results.values()];
    expect(result?.summary?.travel).toMatchObject({
      provider: "city-osrm",
      source: "osrm",
      elementsRequested: 9,
      elementsCached: 0,
      fallbackReason: null,
    });
    expect(result?.summary?.travel?.matrixSeconds).toBe(1.2);
    expect([...state.metered.values()]).toEqual([expect.objectContaining({ travelElements: 9, outcome: "done" })]);
  });

  it("a travel provider failure fails the run with its reason, or plans with great circle when the profile falls back", async () => {
    const failing = async () => {
      throw new TravelMatrixError("The osrm travel provider failed 3 attempts of a 3×3 request: HTTP 502");
    };
    const strict = setup({ findConfiguration: async () => ({ ...configuration, travelProvider: "city-osrm" }), roadMatrix: failing });
    expect(await processRunMessage(strict.ports, message, delivery())).toMatchObject({
      outcome: "failed",
      reason: expect.stringMatching(/^Travel provider city-osrm: The osrm travel provider failed 3 attempts/),
    });
    expect(strict.state.solves).toBe(0);
    const lenient = setup({
      findConfiguration: async () => ({ ...configuration, travelProvider: "city-osrm", travelFallback: "greatCircle" }),
      roadMatrix: failing,
    });
    expect((await processRunMessage(lenient.ports, message, delivery())).outcome).toBe("done");
    expect([...lenient.state.results.values()][0]?.summary?.travel).toMatchObject({
      source: "greatCircle",
      elementsRequested: 0,
      fallbackReason: expect.stringContaining("HTTP 502"),
    });
  });

  it("deadline guard: a search still running when the Lambda nears its timeout stops, and its best plan is stored with endedBy deadline", async () => {
    // The budget is taken with 300 s left; then the clock jumps (e.g. a slow store call) to 15 s left.
    let remainingMs = 300_000;
    const { ports, state } = setup({
      solve: (problem, options) => {
        state.solveOptions.push(options);
        remainingMs = 15_000;
        return solveRouting(problem, { ...options, timeLimitMs: Infinity, maxIterations: undefined, earlyStop: false });
      },
    });
    // No time limit but the guard's: only the guard can end this search (endedBy deadline, not budget).
    const outcome = await processRunMessage(ports, message, { receiveCount: 1, maxReceiveCount: 3, remainingTimeMs: () => remainingMs });
    expect(outcome).toMatchObject({ outcome: "done" });
    const [result] = [...state.results.values()];
    expect(result).toMatchObject({ status: "done", summary: { visitsAssigned: 2, endedBy: "deadline" } });
  });

  it("a run that keeps to its budget is not stopped by the guard and says how it ended", async () => {
    const { ports, state } = setup();
    await processRunMessage(ports, message, delivery(1, 300_000));
    expect(state.solveOptions[0]?.mustStop?.()).toBe(false);
    expect([...state.results.values()][0]?.summary?.endedBy).toBe("budget"); // the fake solver's 20-iteration limit
  });

  it.each([
    ["DONE", { outcome: "ignored" }],
    ["SKIPPED", { outcome: "ignored" }],
    ["RUNNING", { outcome: "busy", retry: true }],
  ] as const)("a delivery for a %s slot does not run", async (status, expected) => {
    const { ports, state } = setup({}, { status, resultId: "r", attempts: 1 });
    expect(await processRunMessage(ports, message, delivery())).toMatchObject(expected);
    expect(state.results.size).toBe(0);
    expect(state.logs).toEqual([]);
  });

  it("skips a schedule changed after the claim (updatedTime differs), with the reason", async () => {
    const { ports, state } = setup({ findSchedule: async () => ({ ...schedule, updatedTime: "2026-03-02 05:59:59" }) });
    expect(await processRunMessage(ports, message, delivery())).toMatchObject({ outcome: "skipped" });
    expect(state.logs[0]).toMatchObject({ status: "SKIPPED", message: expect.stringContaining("changed"), routingResultId: null });
    expect(state.claim?.status).toBe("SKIPPED");
    expect(state.results.size).toBe(0);
  });

  it("a storage failure records FAILED with the reason, marks the result failed and asks SQS to retry; the retry reuses the result id", async () => {
    let failNext = true;
    const { ports, state } = setup();
    const complete = ports.results.complete;
    ports.results.complete = async (...args) => {
      if (failNext) throw new Error("S3 unavailable");
      return complete(...args);
    };
    const first = await processRunMessage(ports, message, delivery(1));
    expect(shouldRetry(first)).toBe(true);
    expect(state.logs[0]).toMatchObject({ status: "FAILED", message: expect.stringMatching(/S3 unavailable.*Attempt 1 of 3/) });
    const [failed] = [...state.results.values()];
    expect(failed).toMatchObject({ status: "failed" });
    expect(state.claim?.status).toBe("FAILED");

    failNext = false;
    expect(await processRunMessage(ports, message, delivery(2))).toMatchObject({ outcome: "done", resultId: failed?._id });
    expect(state.results.size).toBe(1);
    expect(state.logs[1]).toMatchObject({ status: "SUCCESS" });
  });

  it("a profile deleted since the schedule was saved skips the run (no result, no retry) with the reason", async () => {
    const { ports, state } = setup({ findConfiguration: async () => undefined });
    const outcome = await processRunMessage(ports, message, delivery(1));
    expect(outcome).toMatchObject({ outcome: "skipped" });
    expect(shouldRetry(outcome)).toBe(false);
    expect(state.logs).toEqual([
      expect.objectContaining({
        status: "SKIPPED",
        routingResultId: null,
        message: expect.stringContaining("configuration profile conf-1 no longer exists"),
      }),
    ]);
    expect(state.results.size).toBe(0);
    expect(state.claim?.status).toBe("SKIPPED");
  });

  it("a dispatch failure after the result is stored: the retry does not plan again, it dispatches what is left under the same result", async () => {
    let throwFor: string | null = "v2";
    const { ports, state } = setup();
    const mark = ports.markVisitDispatched;
    let inFlight = 0;
    ports.markVisitDispatched = async (...args) => {
      inFlight++;
      try {
        if (args[2] === throwFor) {
          throwFor = null;
          throw new Error("DynamoDB throttled");
        }
        await new Promise((resolve) => setTimeout(resolve, 5)); // the other lane is still writing when v2 throws
        return await mark(...args);
      } finally {
        inFlight--;
      }
    };
    const first = await processRunMessage(ports, message, delivery(1));
    expect(first).toMatchObject({ outcome: "failed", retry: true });
    expect(inFlight).toBe(0); // every lane settled before the failure was recorded
    expect(state.logs[0]).toMatchObject({ status: "FAILED", message: expect.stringContaining("DynamoDB throttled") });
    const [stored] = [...state.results.values()];
    expect(stored?.status).toBe("done"); // the stored plan is kept
    expect(state.solves).toBe(1);
    expect(state.dispatched).toEqual(["v1"]);

    const retry = await processRunMessage(ports, message, delivery(2));
    expect(retry).toMatchObject({ outcome: "done", resultId: stored?._id, dispatched: { success: 2, failed: 0 } });
    expect(state.solves).toBe(1); // no new plan
    expect(state.results.size).toBe(1);
    expect(state.dispatched.sort()).toEqual(["v1", "v2"]); // each visit assigned once
    expect(state.assignedBy.get("v2")).toBe(stored?._id);
    expect(state.logs[1]).toMatchObject({ status: "SUCCESS", routingResultId: stored?._id, dispatched: { success: 2, failed: 0 } });
    expect(state.claim?.status).toBe("DONE");
  });

  it("on-demand: fills an ongoing result and leaves a done one alone", async () => {
    const { ports, state } = setup();
    const ongoing = { _id: "res-1", configurationId: "conf-1", status: "ongoing" } as RoutingResultRecord;
    state.results.set("res-1", ongoing);
    const onDemand = { kind: "onDemand" as const, organizationId: "o", resultId: "res-1" };
    expect(await processRunMessage(ports, onDemand, delivery())).toMatchObject({ outcome: "done", dispatched: null });
    expect(state.results.get("res-1")?.status).toBe("done");
    expect(state.dispatched).toEqual([]);
    expect(await processRunMessage(ports, onDemand, delivery())).toMatchObject({ outcome: "ignored" });
  });

  describe("the slot of the organization's cap on active runs", () => {
    const key = "S#sched-1#2026-03-02T06:00Z";

    it("is freed when the run is done, skipped, or found finished already", async () => {
      const done = setup();
      await processRunMessage(done.ports, message, delivery());
      expect(done.state.released).toEqual([key]);
      const skipped = setup({ findConfiguration: async () => undefined });
      await processRunMessage(skipped.ports, message, delivery());
      expect(skipped.state.released).toEqual([key]);
      const redelivered = setup({}, { status: "DONE", resultId: "r", attempts: 1 });
      await processRunMessage(redelivered.ports, message, delivery(2));
      expect(redelivered.state.released).toEqual([key]);
    });

    it("is kept while the run will be retried or another delivery runs it, and freed when the last delivery fails", async () => {
      const failing = setup();
      failing.ports.results.complete = async () => {
        throw new Error("S3 unavailable");
      };
      await processRunMessage(failing.ports, message, delivery(1));
      await processRunMessage(failing.ports, message, delivery(2));
      expect(failing.state.released).toEqual([]);
      await processRunMessage(failing.ports, message, delivery(3));
      expect(failing.state.released).toEqual([key]);
      const busy = setup({}, { status: "RUNNING", resultId: "r", attempts: 1 });
      await processRunMessage(busy.ports, message, delivery());
      expect(busy.state.released).toEqual([]);
    });

    it("is not freed for a slot without a claim (released un-sent by the tick: a new claim may hold the key)", async () => {
      const { ports, state } = setup({ readClaim: async () => undefined });
      expect(await processRunMessage(ports, message, delivery())).toMatchObject({ outcome: "ignored" });
      expect(state.released).toEqual([]);
    });

    it("on demand: freed when the result is done or gone", async () => {
      const { ports, state } = setup();
      state.results.set("res-1", { _id: "res-1", configurationId: "conf-1", status: "ongoing" } as RoutingResultRecord);
      await processRunMessage(ports, { kind: "onDemand", organizationId: "o", resultId: "res-1" }, delivery());
      await processRunMessage(ports, { kind: "onDemand", organizationId: "o", resultId: "gone" }, delivery());
      expect(state.released).toEqual(["R#res-1", "R#gone"]);
    });
  });

  describe("metering and the run-seconds quota", () => {
    it("meters a done run once (its result id, day of the run id, seconds, memory, visits, vehicles); a redelivery meters nothing more", async () => {
      const { ports, state } = setup();
      const outcome = await processRunMessage(ports, message, delivery());
      expect(outcome.outcome).toBe("done");
      const runId = state.claim?.resultId as string;
      expect([...state.metered.values()]).toEqual([
        expect.objectContaining({
          runId,
          kind: "scheduled",
          scheduleId: "sched-1",
          hubId: "hub-1",
          configurationId: "conf-1",
          outcome: "done",
          visits: 2,
          vehicles: 1,
          memoryMb: 2048,
        }),
      ]);
      expect(state.metered.get(runId)?.day).toBe(new Date(Number.parseInt(runId.slice(0, 8), 16) * 1000).toISOString().slice(0, 10));
      expect(state.metered.get(runId)?.optimizerSeconds).toBeGreaterThanOrEqual(0);
      await processRunMessage(ports, message, delivery(2));
      expect(state.metered.size).toBe(1);
    });

    it("a run that fails after its optimizer ran is metered (failed) on its last delivery only", async () => {
      const { ports, state } = setup();
      ports.results.complete = async () => {
        throw new Error("S3 unavailable");
      };
      await processRunMessage(ports, message, delivery(1));
      expect(state.metered.size).toBe(0);
      await processRunMessage(ports, message, delivery(3));
      expect([...state.metered.values()].map((usage) => usage.outcome)).toEqual(["failed"]);
    });

    it("over the quota: a scheduled run is SKIPPED with the reason in logExecuted, an on-demand one fails with it; neither solves nor meters", async () => {
      const reason = "Monthly run-seconds quota reached: (test)";
      const budgets: number[] = [];
      const { ports, state } = setup({
        runQuotaRefusal: async (_o, budgetSeconds) => {
          budgets.push(budgetSeconds);
          return reason;
        },
      });
      expect(await processRunMessage(ports, message, delivery())).toMatchObject({ outcome: "skipped" });
      expect(state.logs.at(-1)).toMatchObject({ status: "SKIPPED", message: `Skipped: ${reason}`, routingResultId: null });
      expect(state.claim?.status).toBe("SKIPPED");
      state.results.set("res-1", { _id: "res-1", configurationId: "conf-1", status: "ongoing" } as RoutingResultRecord);
      expect(await processRunMessage(ports, { kind: "onDemand", organizationId: "o", resultId: "res-1" }, delivery())).toMatchObject({
        outcome: "skipped",
        reason,
      });
      expect(state.results.get("res-1")).toMatchObject({ status: "failed", message: reason });
      expect(budgets).toEqual([configuration.timeLimitSeconds, configuration.timeLimitSeconds]);
      expect(state.solves).toBe(0);
      expect(state.metered.size).toBe(0);
    });
  });

  describe("every plan is checked before it is stored", () => {
    const onDemand = { kind: "onDemand" as const, organizationId: "o", resultId: "res-1" };
    const ongoing = (): RoutingResultRecord => ({
      _id: "res-1",
      name: "On demand",
      hubId: "hub-1",
      configurationId: "conf-1",
      scheduleId: null,
      createdFrom: "API",
      parentResultId: null,
      status: "ongoing",
      message: null,
      summary: null,
      dispatch: null,
      runTime: "2026-03-02 06:00:30",
      organizationId: "o",
      createdBy: "u",
      createdTime: "2026-03-02 06:00:30",
      updatedTime: "2026-03-02 06:00:30",
      finishedTime: null,
    });
    /** A solver that returns its real plan, then breaks it. */
    const corrupting = (corrupt: (solution: RoutingSolution) => void) => (problem: RoutingProblem, options: SolveOptions) => {
      const solution = solveRouting(problem, { ...options, timeLimitMs: Infinity, maxIterations: 20 });
      corrupt(solution);
      return solution;
    };

    it("never stores a plan whose route breaks a constraint: the route is set aside, its visits dropped, the rejection reported with its seed", async () => {
      const rejections: PlanRejection[] = [];
      const { ports, state } = setup({
        // A stop served one minute before the vehicle could get there (the route's other numbers left as they were).
        solve: corrupting((solution) => {
          const stop = solution.routes[0]!.stops[1]!;
          stop.start -= stop.arrival - solution.routes[0]!.stops[0]!.departure + 1;
          stop.arrival = stop.start;
        }),
        planRejected: (report) => void rejections.push(report),
      });
      state.results.set("res-1", ongoing());
      expect((await processRunMessage(ports, onDemand, delivery())).outcome).toBe("done");
      const body = state.bodies.get("res-1") as RoutingResultBody;
      expect(body.routes).toEqual([]);
      expect(body.dropped.map((entry) => entry.visitId).sort()).toEqual(["v1", "v2"]);
      expect(rejections).toEqual([
        {
          organizationId: "o",
          resultId: "res-1",
          seed: runSeed("res-1", 1),
          violations: [expect.stringMatching(/^veh-1: v[12] starts at/)],
          outcome: "fallback",
        },
      ]);
    });

    it("fails the run, storing no plan, when a violation is not one route's (a visit served twice)", async () => {
      const rejections: PlanRejection[] = [];
      const { ports, state } = setup({
        solve: corrupting((solution) => {
          const route = solution.routes[0]!;
          route.stops.push({ ...route.stops[0]! });
        }),
        planRejected: (report) => void rejections.push(report),
      });
      state.results.set("res-1", ongoing());
      const outcome = await processRunMessage(ports, onDemand, delivery());
      expect(outcome).toMatchObject({ outcome: "failed" });
      expect(state.bodies.has("res-1")).toBe(false);
      expect(state.results.get("res-1")).toMatchObject({
        status: "failed",
        message: expect.stringContaining(`was not stored (seed ${runSeed("res-1", 1)})`),
      });
      expect(rejections).toEqual([expect.objectContaining({ outcome: "failed", seed: runSeed("res-1", 1) })]);
    });

    it("rejects a plan whose answered wall-clock times break a window though its minutes do not", async () => {
      const rejections: PlanRejection[] = [];
      // v1 must be served at 07:00–07:10 (UTC); the solver's plan claims 06:59.5, which the model's check allows
      // within its tolerance only if the window said so: here the window is moved in the problem, not in the record.
      const { ports, state } = setup({
        oldestActiveVisits: async () => [
          { ...(await setup().ports.oldestActiveVisits("o", "hub-1", 10))[0]!, timeWindows: [{ startTime: "07:00", endTime: "07:10" }] },
        ],
        solve: (problem, options) => {
          problem.visits[0]!.timeWindows = [{ start: 58, end: 70 }];
          return solveRouting(problem, { ...options, timeLimitMs: Infinity, maxIterations: 20 });
        },
        planRejected: (report) => void rejections.push(report),
      });
      state.results.set("res-1", ongoing());
      await processRunMessage(ports, onDemand, delivery());
      expect(rejections).toEqual([
        expect.objectContaining({ violations: [expect.stringMatching(/^veh-1: v1 served at 2026-03-02 06:58, outside its windows/)] }),
      ]);
      expect((state.bodies.get("res-1") as RoutingResultBody | undefined)?.routes ?? []).toEqual([]);
    });
  });

  it("keeps to its budget: the matrix gets the budget less the optimizer's minimum as its deadline, the optimizer what is left", async () => {
    let clock = now.getTime();
    const deadlines: number[] = [];
    const { ports, state } = setup({
      now: () => new Date(clock),
      findConfiguration: async () => ({
        ...configuration,
        timeLimitSeconds: 3,
        travelProvider: "slow-osrm",
        travelFallback: "greatCircle",
      }),
      // A provider that never answers gives up at its deadline (shared/domain/travel/road-matrix.ts): the clock is there then.
      roadMatrix: async (request) => {
        deadlines.push(request.deadline.getTime());
        clock = request.deadline.getTime();
        throw new TravelMatrixError("gave no complete answer within the run's time budget");
      },
    });
    expect((await processRunMessage(ports, message, delivery())).outcome).toBe("done");
    expect(deadlines).toEqual([now.getTime() + 3_000 - MIN_SOLVE_MS]);
    expect(state.solveOptions[0]?.timeLimitMs).toBe(MIN_SOLVE_MS);
    const [result] = [...state.results.values()];
    expect(result?.summary?.travel).toMatchObject({ source: "greatCircle", matrixSeconds: 2 });
  });

  describe("road geometry and the explanation's cap, within the run's margin", () => {
    /** A road matrix of the run's points (every leg 10 min, 5 km) from a provider named city-osrm. */
    const roadMatrix: RunWorkerPorts["roadMatrix"] = async (request) => {
      const keys = [...new Set(request.locations.map(locationKey))];
      const n = keys.length;
      const seconds = Float32Array.from({ length: n * n }, (_, k) => (k % (n + 1) === 0 ? 0 : 600));
      const metres = Float32Array.from({ length: n * n }, (_, k) => (k % (n + 1) === 0 ? 0 : 5_000));
      return {
        kind: "osrm",
        matrix: {
          spec: { kind: "matrix", keys, durationsSeconds: seconds, distancesMetres: metres },
          elementsRequested: n * n,
          elementsCached: 0,
          requests: 1,
        },
      };
    };
    const roads = { findConfiguration: async () => ({ ...configuration, travelProvider: "city-osrm" }), roadMatrix };

    it("asks the route service for every route's waypoints by the margin's end less the store's reserve, stores the legs and meters them", async () => {
      const asked: { provider: string; waypoints: number[]; deadline: number }[] = [];
      const { ports, state } = setup({
        ...roads,
        roadGeometry: async (request) => {
          asked.push(
            ...request.routes.map((route) => ({
              provider: request.provider,
              waypoints: [route.waypoints.length],
              deadline: request.deadline.getTime(),
            })),
          );
          return {
            legsByVehicle: new Map(
              request.routes.map((route) => [route.vehicleId, route.waypoints.slice(1).map(() => "_p~iF~ps|U_ulLnnqC")]),
            ),
            requests: request.routes.length,
            elementsRequested: request.routes.reduce((sum, route) => sum + route.waypoints.length - 1, 0),
          };
        },
      });
      expect((await processRunMessage(ports, message, delivery())).outcome).toBe("done");
      // One route: the depot, two visits, back to the depot.
      expect(asked).toEqual([
        { provider: "city-osrm", waypoints: [4], deadline: now.getTime() + 20_000 + BUDGET_MARGIN_MS - STORE_RESERVE_MS },
      ]);
      const [result] = [...state.results.values()];
      expect(result?.summary?.travel?.geometry).toEqual({
        lines: "road",
        routesWithRoads: 1,
        requests: 1,
        elementsRequested: 3,
        reason: null,
      });
      expect((state.bodies.get(result!._id) as RoutingResultBody).routes[0]?.roadGeometry?.legs).toHaveLength(3);
      // The matrix's 9 elements and the route's 3 legs.
      expect([...state.metered.values()]).toEqual([expect.objectContaining({ travelElements: 9 + 3 })]);
    });

    it("skips the geometry, saying so, when the search used the margin up; and a cut explanation is flagged on the summary", async () => {
      let clock = now.getTime();
      let geometryAsked = false;
      const { ports, state } = setup({
        ...roads,
        now: () => new Date(clock),
        // The search returns at the budget's end + the explanation's cap, with both visits dropped.
        solve: (problem) => {
          clock = now.getTime() + 20_000 + EXPLAIN_CAP_MS;
          return {
            routes: [],
            dropped: problem.visits.map((visit) => ({ visitId: visit.id, reason: "could not be fitted" as const })),
            totals: { vehicles: 0, visits: 0, distance: 0, duration: 0, cost: 0 },
            iterations: 0,
            endedBy: "budget",
          } as unknown as RoutingSolution;
        },
        roadGeometry: async () => {
          geometryAsked = true;
          return undefined;
        },
      });
      expect((await processRunMessage(ports, message, delivery())).outcome).toBe("done");
      const [result] = [...state.results.values()];
      expect(result?.summary).toMatchObject({ explanationCut: true, droppedByReason: { unexplained: 2 } });
      expect((state.bodies.get(result!._id) as RoutingResultBody).dropped.map((entry) => entry.reason)).toEqual([
        "could not be fitted: not explained, the explanation reached its time cap",
        "could not be fitted: not explained, the explanation reached its time cap",
      ]);
      // No route, nothing to draw: geometry is not asked.
      expect(geometryAsked).toBe(false);
    });

    it("a route service asked with no time left is not asked: the routes are drawn straight and the result says why", async () => {
      let clock = now.getTime();
      let geometryAsked = false;
      const { ports, state } = setup({
        ...roads,
        now: () => new Date(clock),
        solve: (problem, options) => {
          const solution = solveRouting(problem, { ...options, timeLimitMs: Infinity, maxIterations: 20 });
          clock = now.getTime() + 20_000 + BUDGET_MARGIN_MS - STORE_RESERVE_MS;
          return solution;
        },
        roadGeometry: async () => {
          geometryAsked = true;
          return undefined;
        },
      });
      expect((await processRunMessage(ports, message, delivery())).outcome).toBe("done");
      expect(geometryAsked).toBe(false);
      const [result] = [...state.results.values()];
      expect(result?.summary?.travel?.geometry).toEqual({
        lines: "straight",
        routesWithRoads: 0,
        requests: 0,
        elementsRequested: 0,
        reason: "Road geometry was skipped: no time was left in the run's budget.",
      });
    });
  });
});
