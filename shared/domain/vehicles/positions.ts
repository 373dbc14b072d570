import * as z from "zod/mini";
import { type Caller, callerMayUseHub } from "#shared/domain/caller";
import { ForbiddenError, NotFoundError, ServiceUnavailableError, TooManyRequestsError, ValidationError } from "#shared/domain/errors";
import { clientText, component, pageQuery, storableNumber } from "#shared/domain/schemas";
import { runQuotaResetsAt } from "#shared/domain/usage/run-quota";
import { utcMonth } from "#shared/domain/usage/schema";
import { isoInstant } from "#shared/domain/visits/schema";

/**
 * Vehicle positions (docs/api/execution.md, "Positions"): a driver app reports samples; the vehicle
 * keeps its latest position and a 30-day history, both in the vehicle's own partition (no
 * organization-wide item is written per sample). Pure rules here; the DynamoDB side is
 * shared/store/position-store.ts.
 */
export const POSITION_BATCH_MAX = 20;
export const POSITION_PAST_MS = 24 * 60 * 60 * 1000;
export const POSITION_AHEAD_MS = 60 * 1000;
export const POSITION_HISTORY_DAYS = 30;
/** Per vehicle: at most `requests` reports per fixed window of `windowSeconds` (a driver app reports every few seconds at most). */
export const POSITION_RATE = { windowSeconds: 60, requests: 30 } as const;
/**
 * Samples a vehicle reserves from the organization's monthly counter at a time (the plan's
 * `positionSamplesPerMonth`): the counter is written once per chunk, not once per report, so it is
 * no hot item; a vehicle's unused allowance at the month's end stays charged to that month.
 */
export const POSITION_ALLOWANCE_CHUNK = 50;

export const POSITION_FORBIDDEN_CODE = "position-403";
export const POSITION_RATE_CODE = "position-429";
export const POSITION_QUOTA_CODE = "position-quota-429";

const speed = storableNumber().check(z.minimum(0), z.maximum(500));

export const positionSampleSchema = z.strictObject({
  at: isoInstant.check(z.describe("When the sample was taken; within the last 24 h and at most 60 s ahead of the server.")),
  lat: storableNumber().check(z.minimum(-90), z.maximum(90)),
  lng: storableNumber().check(z.minimum(-180), z.maximum(180)),
  accuracyM: z.optional(storableNumber().check(z.minimum(0), z.maximum(100_000))),
  speedKmh: z.optional(speed),
  headingDeg: z.optional(storableNumber().check(z.minimum(0), z.lt(360))),
});
export type PositionSample = z.infer<typeof positionSampleSchema>;

export const positionBatchSchema = z.strictObject({
  positions: z.array(positionSampleSchema).check(z.minLength(1), z.maxLength(POSITION_BATCH_MAX)),
});
export type PositionBatch = z.infer<typeof positionBatchSchema>;

export const positionBatchResultSchema = component(
  "PositionBatchResult",
  z.object({
    accepted: z.number().check(z.int(), z.describe("New samples newer than the vehicle's latest: stored, the newest is now the latest.")),
    duplicates: z.number().check(z.int(), z.describe("Samples whose `at` was already stored (or repeated in the batch): nothing written.")),
    stale: z.number().check(z.int(), z.describe("New samples older than the vehicle's latest position: kept in the history only.")),
  }),
);
export type PositionBatchResult = z.infer<typeof positionBatchResultSchema>;

/** A stored sample, as answered: `at` normalized to UTC with milliseconds (the key of the sample). */
export const vehiclePositionSchema = component(
  "VehiclePosition",
  z.object({
    at: z.string().check(clientText),
    lat: z.number(),
    lng: z.number(),
    accuracyM: z.nullable(z.number()),
    speedKmh: z.nullable(z.number()),
    headingDeg: z.nullable(z.number()),
  }),
);
export type VehiclePosition = z.infer<typeof vehiclePositionSchema>;

export const vehicleLatestPositionSchema = component(
  "VehicleLatestPosition",
  z.object({
    vehicleId: z.string().check(clientText),
    hubId: z.string().check(clientText),
    name: z.string().check(clientText),
    position: z.nullable(vehiclePositionSchema).check(z.describe("null until the vehicle reports one.")),
  }),
);
export type VehicleLatestPosition = z.infer<typeof vehicleLatestPositionSchema>;

const formatParameter = z.optional(
  z.enum(["json", "geojson"]).check(z.describe("`geojson`: the same page as GeoJSON (application/geo+json).")),
);

export const positionHistoryQuerySchema = pageQuery({
  from: z.optional(isoInstant.check(z.describe("Oldest sample time (inclusive); default `to` − 24 h."))),
  to: z.optional(isoInstant.check(z.describe("Newest sample time (inclusive); default now."))),
  format: formatParameter,
});
export type PositionHistoryQuery = z.infer<typeof positionHistoryQuerySchema>;

export const latestPositionsQuerySchema = pageQuery({
  hubId: z.optional(z.string().check(clientText, z.minLength(1), z.maxLength(64))).check(z.describe("Vehicles of this hub only.")),
  format: formatParameter,
});
export type LatestPositionsQuery = z.infer<typeof latestPositionsQuerySchema>;

const coordinates = z.tuple([z.number().check(z.describe("longitude")), z.number().check(z.describe("latitude"))]);
export const positionTrackGeoJsonSchema = component(
  "VehiclePositionTrack",
  z.object({
    type: z.literal("Feature"),
    geometry: z
      .nullable(z.object({ type: z.literal("LineString"), coordinates: z.array(coordinates).check(z.minLength(2)) }))
      .check(z.describe("null when the page holds fewer than two samples (a LineString needs two).")),
    properties: z.object({
      vehicleId: z.string(),
      times: z.array(z.string()).check(z.describe("The samples' `at`, one per coordinate.")),
      nextCursor: z.nullable(z.string()),
    }),
  }),
);
export const latestPositionsGeoJsonSchema = component(
  "VehiclePositionsCollection",
  z.object({
    type: z.literal("FeatureCollection"),
    features: z.array(
      z.object({
        type: z.literal("Feature"),
        geometry: z.object({ type: z.literal("Point"), coordinates }),
        properties: z.object({
          vehicleId: z.string(),
          hubId: z.string(),
          name: z.string(),
          at: z.string(),
          accuracyM: z.nullable(z.number()),
          speedKmh: z.nullable(z.number()),
          headingDeg: z.nullable(z.number()),
        }),
      }),
    ),
    nextCursor: z.nullable(z.string()).check(z.describe("Foreign member: the cursor of the next page of vehicles.")),
  }),
);

/** The vehicle's per-vehicle state item: its latest position, its rate window and its prepaid sample allowance. */
export interface PositionState {
  latest: VehiclePosition | null;
  /** Start of the current rate window (epoch seconds) and the reports counted in it. */
  rateWindow: number | null;
  rateCount: number;
  /** Samples reserved from the organization's counter and not yet used, for `allowanceMonth` (`YYYY-MM`). */
  allowanceMonth: string | null;
  allowance: number;
  /**
   * When a report last claimed the vehicle's live-route refresh (ISO UTC, the server's clock): the
   * throttle of `liveRefreshDue`, kept here so that claiming it costs no write of its own.
   */
  liveRefreshedAt: string | null;
  /** Every write is conditional on it: the decision (newer, rate, allowance) was made on what is stored. */
  revision: number;
}

export const emptyPositionState: PositionState = {
  latest: null,
  rateWindow: null,
  rateCount: 0,
  allowanceMonth: null,
  allowance: 0,
  liveRefreshedAt: null,
  revision: 0,
};

export interface PositionVehicle {
  vehicleId: string;
  hubId: string;
  name: string;
  assignee: string | null;
}

export interface PositionPage<T> {
  items: T[];
  nextCursor: string | null;
}

/** Persistence port (shared/store/position-store.ts). */
export interface PositionStore {
  /** The vehicle and its position state, read together and strongly consistently. */
  read(organizationId: string, vehicleId: string): Promise<{ vehicle: PositionVehicle | undefined; state: PositionState }>;
  /** Which of these sample times (normalized, at most POSITION_BATCH_MAX) the history already holds: a read of exactly those keys. */
  storedTimes(organizationId: string, vehicleId: string, ats: string[]): Promise<Set<string>>;
  /** Writes `next` when the stored revision is still `next.revision - 1`; false when another report wrote first. */
  writeState(organizationId: string, vehicleId: string, next: PositionState): Promise<boolean>;
  /** Appends samples to the history (kept POSITION_HISTORY_DAYS); a sample already stored is overwritten identically. */
  appendHistory(organizationId: string, vehicleId: string, samples: VehiclePosition[]): Promise<void>;
  history(
    organizationId: string,
    vehicleId: string,
    fromAt: string,
    toAt: string,
    limit: number,
    cursor?: string,
  ): Promise<PositionPage<VehiclePosition>>;
  vehicles(
    organizationId: string,
    filter: { hubId?: string | undefined; allowedHubIds: string[]; limit: number; cursor?: string | undefined },
  ): Promise<PositionPage<PositionVehicle>>;
  latestOf(organizationId: string, vehicleIds: string[]): Promise<Map<string, VehiclePosition>>;
}

/**
 * Port: told after a report's write when it moved the vehicle's latest position (shared/domain/live:
 * geofence arrival and the live route's re-projection). `track` is the previous latest followed by the
 * accepted samples, oldest first; `refresh` is true when this report claimed the minute's refresh. It
 * must not throw: the samples are stored whatever it does.
 */
export type PositionsReported = (
  caller: Caller,
  vehicle: PositionVehicle,
  report: { track: VehiclePosition[]; refresh: boolean },
) => Promise<void>;

/** Port: reserve `amount` samples of the organization's month against its plan (shared/domain/usage/reservations.ts). */
export type SampleReservation = (
  organizationId: string,
  month: string,
  amount: number,
) => Promise<{ granted: true } | { granted: false; used: number; cap: number; plan: string }>;

export const normalizedAt = (at: string) => new Date(at).toISOString();

function storedSample(sample: PositionSample): VehiclePosition {
  return {
    at: normalizedAt(sample.at),
    lat: sample.lat,
    lng: sample.lng,
    accuracyM: sample.accuracyM ?? null,
    speedKmh: sample.speedKmh ?? null,
    headingDeg: sample.headingDeg ?? null,
  };
}

/** Every sample's `at` within [now − 24 h, now + 60 s], else a 400 naming each one out of range. */
export function assertSampleTimes(samples: readonly PositionSample[], now: Date): void {
  const errors = samples.flatMap((sample, index) => {
    const at = Date.parse(sample.at);
    return at < now.getTime() - POSITION_PAST_MS || at > now.getTime() + POSITION_AHEAD_MS
      ? [
          {
            field: `positions.${index}.at`,
            message: "at must be within the last 24 hours and at most 60 seconds ahead of the server's time",
          },
        ]
      : [];
  });
  if (errors.length > 0) throw new ValidationError(errors);
}

/** The batch's distinct samples (first of each `at`), oldest first, and how many repeated an `at` of the batch. */
export function distinctSamples(samples: readonly PositionSample[]): { samples: VehiclePosition[]; repeated: number } {
  const byAt = new Map<string, VehiclePosition>();
  for (const sample of samples.map(storedSample)) if (!byAt.has(sample.at)) byAt.set(sample.at, sample);
  return { samples: [...byAt.values()].sort((a, b) => a.at.localeCompare(b.at)), repeated: samples.length - byAt.size };
}

/** A vehicle's live route is re-projected on its positions at most once per this many seconds. */
export const LIVE_REFRESH_INTERVAL_SECONDS = 60;

/**
 * Whether a report at `now` may claim the vehicle's live-route refresh: once `LIVE_REFRESH_INTERVAL_SECONDS`
 * have passed since the last claim (by the server's clock, never the samples' `at`, which a replayed
 * queue may set anywhere in the last 24 h). A clock that went back counts as passed, so it cannot stall.
 */
export function liveRefreshDue(lastRefreshedAt: string | null, now: Date): boolean {
  if (lastRefreshedAt === null) return true;
  const elapsed = now.getTime() - Date.parse(lastRefreshedAt);
  return !Number.isFinite(elapsed) || elapsed < 0 || elapsed >= LIVE_REFRESH_INTERVAL_SECONDS * 1000;
}

export type RateDecision = { allowed: true; window: number; count: number } | { allowed: false; retryAfterSeconds: number };

/** The fixed-window rate of one vehicle: the report is the window's `count`-th, or refused until the window ends. */
export function rateDecision(state: PositionState, now: Date): RateDecision {
  const nowSeconds = now.getTime() / 1000;
  const window = Math.floor(nowSeconds / POSITION_RATE.windowSeconds) * POSITION_RATE.windowSeconds;
  const used = state.rateWindow === window ? state.rateCount : 0;
  if (used >= POSITION_RATE.requests)
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(window + POSITION_RATE.windowSeconds - nowSeconds)) };
  return { allowed: true, window, count: used + 1 };
}

/** Splits new samples into those newer than the latest (accepted; the newest becomes the latest) and stale ones. */
export function splitByLatest(fresh: readonly VehiclePosition[], latest: VehiclePosition | null) {
  const accepted = latest === null ? [...fresh] : fresh.filter((sample) => sample.at > latest.at);
  return { accepted, stale: fresh.length - accepted.length, newest: accepted.at(-1) ?? latest };
}

export class PositionRateLimitedError extends TooManyRequestsError {
  constructor(retryAfterSeconds: number) {
    super(
      `This vehicle reports positions too often: at most ${POSITION_RATE.requests} reports per ${POSITION_RATE.windowSeconds} seconds. Retry after ${retryAfterSeconds} s.`,
      POSITION_RATE_CODE,
      retryAfterSeconds,
    );
  }
}

export class PositionQuotaExceededError extends TooManyRequestsError {
  constructor(refusal: { used: number; cap: number; plan: string }, samples: number, now: Date) {
    const resetsAt = runQuotaResetsAt(now);
    super(
      `Monthly position quota reached: plan ${refusal.plan} allows ${refusal.cap} position samples per month, ` +
        `${refusal.used} are used in ${utcMonth(now)} and this report holds ${samples} new. The quota resets at ${resetsAt.toISOString()}.`,
      POSITION_QUOTA_CODE,
      Math.ceil((resetsAt.getTime() - now.getTime()) / 1000),
    );
  }
}

/** How many times a report re-reads and retries when another report of the same vehicle wrote between its read and its write. */
const WRITE_ATTEMPTS = 8;

export function createPositionService(
  store: PositionStore,
  reserve: SampleReservation,
  now: () => Date = () => new Date(),
  reported: PositionsReported = async () => {},
) {
  async function visibleVehicle(caller: Caller, vehicleId: string) {
    const read = await store.read(caller.organizationId, vehicleId);
    if (!read.vehicle || !callerMayUseHub(caller, read.vehicle.hubId)) throw new NotFoundError();
    return { vehicle: read.vehicle, state: read.state };
  }

  return {
    /**
     * POST /vehicle/{id}/positions. Order of writes: the vehicle's state item first (rate, allowance,
     * latest — one conditional write), then the history; so a refused report (403, 429) writes nothing,
     * and no history item is ever newer than the latest position (which lets a report skip the
     * duplicate read when all its samples are newer).
     */
    async add(caller: Caller, vehicleId: string, input: PositionBatch): Promise<PositionBatchResult> {
      const time = now();
      assertSampleTimes(input.positions, time);
      const distinct = distinctSamples(input.positions);
      const month = utcMonth(time);
      let reservedHere = 0;
      for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
        const { vehicle, state } = await visibleVehicle(caller, vehicleId);
        if (!caller.permissions.has("edit/vehicle") && (vehicle.assignee === null || vehicle.assignee !== caller.userId))
          throw new ForbiddenError(
            "Only the vehicle's driver (its assignee), or a holder of edit/vehicle, may report its positions.",
            POSITION_FORBIDDEN_CODE,
          );
        const rate = rateDecision(state, time);
        if (!rate.allowed) throw new PositionRateLimitedError(rate.retryAfterSeconds);
        // Only samples not newer than the latest can already be stored (see above): those keys are read, no others.
        const latestAt = state.latest?.at;
        const older = latestAt === undefined ? [] : distinct.samples.filter((sample) => sample.at <= latestAt);
        const stored =
          older.length === 0
            ? new Set<string>()
            : await store.storedTimes(
                caller.organizationId,
                vehicleId,
                older.map((sample) => sample.at),
              );
        const fresh = distinct.samples.filter((sample) => !stored.has(sample.at));
        const duplicates = distinct.repeated + (distinct.samples.length - fresh.length);
        const split = splitByLatest(fresh, state.latest);
        if (fresh.length === 0) return { accepted: 0, duplicates, stale: 0 };
        let allowance = (state.allowanceMonth === month ? state.allowance : 0) + reservedHere;
        if (allowance < fresh.length) {
          const shortfall = fresh.length - allowance;
          let amount = Math.max(POSITION_ALLOWANCE_CHUNK, shortfall);
          let outcome = await reserve(caller.organizationId, month, amount);
          // Near the cap a whole chunk may not fit where this report does.
          if (!outcome.granted && amount > shortfall) {
            amount = shortfall;
            outcome = await reserve(caller.organizationId, month, amount);
          }
          if (!outcome.granted) throw new PositionQuotaExceededError(outcome, fresh.length, time);
          reservedHere += amount;
          allowance += amount;
        }
        // The minute's refresh is claimed in the same conditional write: of racing reports one wins it.
        const refresh = split.accepted.length > 0 && liveRefreshDue(state.liveRefreshedAt, time);
        const next: PositionState = {
          latest: split.newest,
          rateWindow: rate.window,
          rateCount: rate.count,
          allowanceMonth: month,
          allowance: allowance - fresh.length,
          liveRefreshedAt: refresh ? time.toISOString() : state.liveRefreshedAt,
          revision: state.revision + 1,
        };
        if (!(await store.writeState(caller.organizationId, vehicleId, next))) continue;
        await store.appendHistory(caller.organizationId, vehicleId, fresh);
        if (split.accepted.length > 0)
          await reported(caller, vehicle, { track: [...(state.latest ? [state.latest] : []), ...split.accepted], refresh });
        return { accepted: split.accepted.length, duplicates, stale: split.stale };
      }
      throw new ServiceUnavailableError("Too many reports of this vehicle at once; nothing was stored. Retry shortly.", 1);
    },

    /** GET /vehicle/{id}/positions: the history between `from` and `to`, oldest first, paginated. */
    async history(caller: Caller, vehicleId: string, query: PositionHistoryQuery): Promise<PositionPage<VehiclePosition>> {
      await visibleVehicle(caller, vehicleId);
      const to = query.to !== undefined ? normalizedAt(query.to) : now().toISOString();
      const from = query.from !== undefined ? normalizedAt(query.from) : new Date(Date.parse(to) - POSITION_PAST_MS).toISOString();
      if (from > to) throw ValidationError.single("from", "from must not be after to");
      return store.history(caller.organizationId, vehicleId, from, to, query.limit, query.cursor);
    },

    /** GET /vehicles/positions: the latest position of each vehicle of a page of vehicles (by hub, from the vehicles' hub index). */
    async latest(caller: Caller, query: LatestPositionsQuery): Promise<PositionPage<VehicleLatestPosition>> {
      if (query.hubId !== undefined && !callerMayUseHub(caller, query.hubId))
        throw ValidationError.single("hubId", "hubId must be one of the hubs your token allows");
      const page = await store.vehicles(caller.organizationId, {
        hubId: query.hubId,
        allowedHubIds: caller.hubIds,
        limit: query.limit,
        cursor: query.cursor,
      });
      const positions = await store.latestOf(
        caller.organizationId,
        page.items.map((vehicle) => vehicle.vehicleId),
      );
      return {
        items: page.items.map((vehicle) => ({
          vehicleId: vehicle.vehicleId,
          hubId: vehicle.hubId,
          name: vehicle.name,
          position: positions.get(vehicle.vehicleId) ?? null,
        })),
        nextCursor: page.nextCursor,
      };
    },
  };
}

/** GET /vehicle/{id}/positions?format=geojson: the page as one LineString Feature ([lng, lat], RFC 7946). */
export function trackToGeoJson(vehicleId: string, page: PositionPage<VehiclePosition>) {
  return {
    type: "Feature" as const,
    geometry:
      page.items.length >= 2
        ? { type: "LineString" as const, coordinates: page.items.map((sample) => [sample.lng, sample.lat] as [number, number]) }
        : null,
    properties: { vehicleId, times: page.items.map((sample) => sample.at), nextCursor: page.nextCursor },
  };
}

/** GET /vehicles/positions?format=geojson: a Point per vehicle that has reported (vehicles without a position are left out). */
export function latestToGeoJson(page: PositionPage<VehicleLatestPosition>) {
  return {
    type: "FeatureCollection" as const,
    features: page.items.flatMap((item) =>
      item.position === null
        ? []
        : [
            {
              type: "Feature" as const,
              geometry: { type: "Point" as const, coordinates: [item.position.lng, item.position.lat] as [number, number] },
              properties: {
                vehicleId: item.vehicleId,
                hubId: item.hubId,
                name: item.name,
                at: item.position.at,
                accuracyM: item.position.accuracyM,
                speedKmh: item.position.speedKmh,
                headingDeg: item.position.headingDeg,
              },
            },
          ],
    ),
    nextCursor: page.nextCursor,
  };
}
