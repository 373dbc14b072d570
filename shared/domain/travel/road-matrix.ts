import { locationKey } from "#shared/routing/matrix";
import type { Location, MatrixTravelSpec } from "#shared/routing/model";

/**
 * Road-network travel matrices (no I/O here: the engine and the cache are ports). One matrix covers a
 * run's distinct points (visits, vehicle starts and ends, keyed by coordinates rounded to 1e-5): the
 * entries the hub's cache holds (younger than the TTL) are reused, and only the missing rows and
 * columns are asked of the engine — in tiles within its limits, a bounded number at a time, each
 * retried on errors, timeouts and partial answers before the whole matrix fails.
 */

/** An engine's answer for one tile: rows are the sources, columns the destinations; null where it knows no route. */
export interface TableAnswer {
  durationsSeconds: (number | null)[][];
  distancesMetres: (number | null)[][];
}

/**
 * What kind of failure a provider had, the only part of it tenants see (results, fallback reasons,
 * events): never the operator's URL, an address or a socket error, which stay in the logs.
 */
export type TravelFailureKind = "timeout" | "unreachable" | "badAnswer" | "refused";

const failureWords: Record<TravelFailureKind, string> = {
  timeout: "did not answer in time",
  unreachable: "could not be reached",
  badAnswer: "gave an unusable answer",
  refused: "refused a request",
};

/**
 * Why a tile failed; `retryable` false (a rejected request, a denied call) fails the matrix at once.
 * `message` is the detail for the operator's logs only.
 */
export class TravelSourceError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly kind: TravelFailureKind = retryable ? "badAnswer" : "refused",
  ) {
    super(message);
  }
}

/** The engine: one tile of sources × destinations (indices into `points`). */
export interface TravelTableSource {
  /** For messages and the result: `osrm`, `amazonLocation`. */
  readonly kind: string;
  /** Most sources and destinations of one request. */
  readonly maxSources: number;
  readonly maxDestinations: number;
  readonly concurrency: number;
  readonly timeoutMs: number;
  readonly retries: number;
  table(
    points: readonly Location[],
    sources: readonly number[],
    destinations: readonly number[],
    signal: AbortSignal,
  ): Promise<TableAnswer>;
}

/** What the cache of a hub and provider holds: the full directed matrix between `keys`, with when each key's row and column were asked. */
export interface CachedMatrix {
  keys: string[];
  /** Per key, ms since the epoch. */
  fetchedAt: number[];
  durationsSeconds: Float32Array;
  distancesMetres: Float32Array;
}

/**
 * The hub's cache of one provider. `read` gives the cached matrix that holds the most of `keys` within
 * the TTL (a bounded cache keeps several: shared/domain/travel/matrix-cache-index.ts); `write` adds the
 * run's matrix (the points it asked or reused), the cache deciding what it keeps.
 */
export interface TravelMatrixCache {
  read(keys: readonly string[], now: number, ttlMs: number): Promise<CachedMatrix | undefined>;
  write(matrix: CachedMatrix, now: number, ttlMs: number): Promise<void>;
}

/**
 * The matrix could not be had. `message` is safe to show the tenant (the provider's kind and the
 * kind of failure); `detail` is for the logs; `elementsAnswered`: entries the provider did answer
 * before the failure (cached, and charged).
 */
export class TravelMatrixError extends Error {
  constructor(
    message: string,
    readonly detail: string = message,
    readonly elementsAnswered = 0,
  ) {
    super(message);
  }
}

export interface RoadMatrix {
  spec: MatrixTravelSpec;
  /** Entries asked of the engine (sources × destinations summed over its requests): what is metered and billed. */
  elementsRequested: number;
  /** Entries taken from the cache. */
  elementsCached: number;
  requests: number;
}

/** What an unreachable pair costs: large enough that no plan drives it, finite so costs stay comparable. */
export const UNREACHABLE_SECONDS = 1e6;
export const UNREACHABLE_METRES = 1e8;

export interface RoadMatrixInput {
  locations: readonly Location[];
  source: TravelTableSource;
  cache?: TravelMatrixCache | undefined;
  cacheTtlMs: number;
  now: () => number;
  /**
   * Epoch ms by which the matrix is had or given up (the run's budget): every attempt's timeout is cut to what
   * is left, no attempt starts after it, and a backoff never sleeps past it. Default: none.
   */
  deadline?: number;
  /** The clock the deadline is read with. Default `Date.now`. */
  clock?: () => number;
  /**
   * The plan's monthly cap: reserves `elements` before any is asked (a refusal reason when they do
   * not fit), and `settle` charges what the provider answered (shared/domain/usage/reservations.ts).
   */
  elementsBudget?: ElementsBudget;
  sleep?: (ms: number) => Promise<void>;
}

export interface ElementsBudget {
  /** Reserves `elements`; the reason they may not be asked, or undefined when reserved. */
  reserve(elements: number): Promise<string | undefined>;
  /** Charges `answered` of the `reserved` elements (gives the rest back). */
  settle(reserved: number, answered: number): Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function buildRoadMatrix(input: RoadMatrixInput): Promise<RoadMatrix> {
  const { source } = input;
  // Distinct points by key, in first-seen order.
  const keys: string[] = [];
  const points: Location[] = [];
  const seen = new Map<string, number>();
  for (const location of input.locations) {
    const key = locationKey(location);
    if (seen.has(key)) continue;
    seen.set(key, keys.length);
    keys.push(key);
    points.push({ lat: Number(location.lat.toFixed(5)), lng: Number(location.lng.toFixed(5)) });
  }
  const n = keys.length;
  const durations = new Float32Array(new SharedArrayBuffer(n * n * Float32Array.BYTES_PER_ELEMENT));
  const distances = new Float32Array(new SharedArrayBuffer(n * n * Float32Array.BYTES_PER_ELEMENT));
  const fetchedAt = new Array<number>(n).fill(0);

  // Reuse what the cache knows and is young enough.
  const now = input.now();
  const cached = await input.cache?.read(keys, now, input.cacheTtlMs).catch(() => undefined);
  const known: number[] = [];
  const missing: number[] = [];
  const cachedIndex = new Map<number, number>();
  if (cached) {
    const at = new Map(cached.keys.map((key, i) => [key, i]));
    for (let i = 0; i < n; i++) {
      const c = at.get(keys[i]!);
      if (c !== undefined && now - cached.fetchedAt[c]! < input.cacheTtlMs) cachedIndex.set(i, c);
    }
  }
  for (let i = 0; i < n; i++) (cachedIndex.has(i) ? known : missing).push(i);
  if (cached) {
    const m = cached.keys.length;
    for (const i of known) {
      const ci = cachedIndex.get(i)!;
      fetchedAt[i] = cached.fetchedAt[ci]!;
      for (const j of known) {
        durations[i * n + j] = cached.durationsSeconds[ci * m + cachedIndex.get(j)!]!;
        distances[i * n + j] = cached.distancesMetres[ci * m + cachedIndex.get(j)!]!;
      }
    }
  }

  // Missing rows (new points to every point) and missing columns (known points to the new ones).
  const all = Array.from({ length: n }, (_, i) => i);
  const tiles = [...tilesOf(missing, all, source), ...tilesOf(known, missing, source)];
  const elementsRequested = tiles.reduce((sum, tile) => sum + tile.sources.length * tile.destinations.length, 0);
  const result: RoadMatrix = {
    spec: { kind: "matrix", keys, durationsSeconds: durations, distancesMetres: distances },
    elementsRequested,
    elementsCached: known.length * known.length,
    requests: tiles.length,
  };
  if (tiles.length === 0) return result;
  const refused = await input.elementsBudget?.reserve(elementsRequested);
  if (refused) throw new TravelMatrixError(refused);

  const sleep = input.sleep ?? defaultSleep;
  // Which entries the provider answered: on a failure those are still cached and charged.
  const answered = new Uint8Array(n * n);
  for (const i of known) for (const j of known) answered[i * n + j] = 1;
  let elementsAnswered = 0;
  let next = 0;
  let failure: TravelMatrixError | undefined;
  const worker = async () => {
    while (!failure && next < tiles.length) {
      const tile = tiles[next++]!;
      try {
        const answer = await askWithRetries(source, points, tile, sleep, input.deadline ?? Infinity, input.clock ?? Date.now);
        tile.sources.forEach((i, r) => {
          tile.destinations.forEach((j, c) => {
            const seconds = answer.durationsSeconds[r]![c];
            const metres = answer.distancesMetres[r]![c];
            const unreachable = i !== j && (seconds === null || metres === null || seconds === undefined || metres === undefined);
            durations[i * n + j] = unreachable ? UNREACHABLE_SECONDS : (seconds ?? 0);
            distances[i * n + j] = unreachable ? UNREACHABLE_METRES : (metres ?? 0);
            answered[i * n + j] = 1;
          });
        });
        elementsAnswered += tile.sources.length * tile.destinations.length;
      } catch (error) {
        failure ??=
          error instanceof TravelMatrixError
            ? error
            : new TravelMatrixError(`The ${source.kind} travel provider failed.`, error instanceof Error ? error.message : String(error));
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(source.concurrency, tiles.length) }, worker));
  } finally {
    await input.elementsBudget?.settle(elementsRequested, elementsAnswered);
  }
  const complete = failure ? completePoints(answered, n, known, missing) : [...known, ...missing];
  for (const i of missing) fetchedAt[i] = now;
  // A cache that cannot be written costs the next run its elements, not this run its plan.
  await input.cache
    ?.write(
      failure
        ? subMatrix(complete, keys, fetchedAt, durations, distances)
        : { keys, fetchedAt, durationsSeconds: durations, distancesMetres: distances },
      now,
      input.cacheTtlMs,
    )
    .catch(() => undefined);
  if (failure) throw new TravelMatrixError(failure.message, failure.detail, elementsAnswered);
  result.elementsRequested = elementsAnswered;
  return result;
}

/**
 * After a failure: the points whose entries to and from each other were all answered (or cached),
 * so the cache can keep them and the next run asks only for the others. Starts from every point
 * and drops a point missing an entry with a kept one until none is missing.
 */
function completePoints(answered: Uint8Array, n: number, known: readonly number[], missing: readonly number[]): number[] {
  let kept = [...known, ...missing];
  for (let changed = true; changed; ) {
    changed = false;
    const next = kept.filter((i) => kept.every((j) => answered[i * n + j] === 1 && answered[j * n + i] === 1));
    if (next.length !== kept.length) {
      kept = next;
      changed = true;
    }
  }
  return kept;
}

function subMatrix(
  points: readonly number[],
  keys: readonly string[],
  fetchedAt: readonly number[],
  durations: Float32Array,
  distances: Float32Array,
): CachedMatrix {
  const n = keys.length;
  const m = points.length;
  const durationsSeconds = new Float32Array(m * m);
  const distancesMetres = new Float32Array(m * m);
  points.forEach((i, a) => {
    points.forEach((j, b) => {
      durationsSeconds[a * m + b] = durations[i * n + j]!;
      distancesMetres[a * m + b] = distances[i * n + j]!;
    });
  });
  return { keys: points.map((i) => keys[i]!), fetchedAt: points.map((i) => fetchedAt[i]!), durationsSeconds, distancesMetres };
}

interface Tile {
  sources: number[];
  destinations: number[];
}

/** Rows × columns cut into requests of at most the engine's sources and destinations. */
function tilesOf(rows: readonly number[], columns: readonly number[], source: TravelTableSource): Tile[] {
  const tiles: Tile[] = [];
  if (rows.length === 0 || columns.length === 0) return tiles;
  for (let r = 0; r < rows.length; r += source.maxSources) {
    for (let c = 0; c < columns.length; c += source.maxDestinations) {
      tiles.push({ sources: rows.slice(r, r + source.maxSources), destinations: columns.slice(c, c + source.maxDestinations) });
    }
  }
  return tiles;
}

async function askWithRetries(
  source: TravelTableSource,
  points: readonly Location[],
  tile: Tile,
  sleep: (ms: number) => Promise<void>,
  deadline: number,
  clock: () => number,
): Promise<TableAnswer> {
  let last = "";
  let attempts = 0;
  let kind: TravelFailureKind = "badAnswer";
  for (let attempt = 0; attempt <= source.retries; attempt++) {
    if (attempt > 0) await sleep(Math.min(200 * 2 ** (attempt - 1), Math.max(0, deadline - clock())));
    const left = deadline - clock();
    if (left <= 0) throw budgetEnded(source, attempts, last);
    const timeoutMs = Math.max(1, Math.min(source.timeoutMs, Math.ceil(left)));
    // An attempt whose timeout is what was left of the budget: its timing out is the budget's end.
    const cutToBudget = timeoutMs < source.timeoutMs;
    attempts++;
    try {
      const answer = await source.table(points, tile.sources, tile.destinations, AbortSignal.timeout(timeoutMs));
      if (!isComplete(answer, tile))
        throw new TravelSourceError(
          `a partial answer (expected ${tile.sources.length}×${tile.destinations.length} entries)`,
          true,
          "badAnswer",
        );
      return answer;
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
      const retryable = error instanceof TravelSourceError ? error.retryable : true;
      kind = timedOut ? "timeout" : error instanceof TravelSourceError ? error.kind : "badAnswer";
      last = timedOut ? `no answer within ${timeoutMs} ms` : error instanceof Error ? error.message : String(error);
      if (timedOut && cutToBudget) throw budgetEnded(source, attempts, last);
      if (!retryable) throw new TravelMatrixError(`The ${source.kind} travel provider ${failureWords[kind]}.`, `${source.kind}: ${last}`);
    }
  }
  const what = `${attempts} attempt${attempts > 1 ? "s" : ""} of a ${tile.sources.length}×${tile.destinations.length} request`;
  throw new TravelMatrixError(`The ${source.kind} travel provider ${failureWords[kind]} (${what}).`, `${source.kind}, ${what}: ${last}`);
}

function budgetEnded(source: TravelTableSource, attempts: number, last: string): TravelMatrixError {
  const tried = attempts > 0 ? ` (${attempts} attempt${attempts > 1 ? "s" : ""})` : "";
  return new TravelMatrixError(
    `The ${source.kind} travel provider gave no complete answer within the run's time budget${tried}.`,
    `${source.kind}${tried}: ${last || "the budget ended before the first attempt"}`,
  );
}

function isComplete(answer: TableAnswer, tile: Tile): boolean {
  const full = (rows: (number | null)[][]) =>
    Array.isArray(rows) &&
    rows.length === tile.sources.length &&
    rows.every((row) => Array.isArray(row) && row.length === tile.destinations.length);
  return full(answer.durationsSeconds) && full(answer.distancesMetres);
}
