import { describe, expect, it } from "vitest";
import { buildRoadMatrix, type TravelTableSource, TravelMatrixError } from "#shared/domain/travel/road-matrix";

/** An engine that never answers: each request ends only when its signal aborts. Records each request's signal. */
function silentSource(signals: AbortSignal[]): TravelTableSource {
  return {
    kind: "osrm",
    maxSources: 10,
    maxDestinations: 10,
    concurrency: 1,
    timeoutMs: 15_000,
    retries: 2,
    table: (_points, _sources, _destinations, signal) => {
      signals.push(signal);
      return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    },
  };
}

const points = [
  { lat: -6.2, lng: 106.8 },
  { lat: -6.21, lng: 106.81 },
];

describe("Road matrix: a deadline from the run's budget", () => {
  it("cuts the attempt's timeout to what is left, starts no attempt after the deadline and gives up with the budget's reason", async () => {
    const signals: AbortSignal[] = [];
    let clock = 1_000_000;
    const failure = buildRoadMatrix({
      locations: points,
      source: silentSource(signals),
      cacheTtlMs: 1,
      now: () => clock,
      // 150 ms left; the injected clock jumps past the deadline once the first attempt timed out.
      deadline: clock + 150,
      clock: () => clock,
      sleep: async () => {
        clock += 1_000;
      },
    });
    const error = await failure.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TravelMatrixError);
    // The tenant reads the kind of failure; the provider's own words go to the logs only (#42).
    expect((error as TravelMatrixError).message).toMatch(/no complete answer within the run's time budget \(1 attempt\)\.$/);
    expect((error as TravelMatrixError).detail).toMatch(/\(1 attempt\): no answer within 150 ms$/);
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
  });

  it("without a deadline keeps the provider's own attempts and timeout", async () => {
    const signals: AbortSignal[] = [];
    const source = { ...silentSource(signals), timeoutMs: 100, retries: 1 };
    const error = await buildRoadMatrix({ locations: points, source, cacheTtlMs: 1, now: () => 0, sleep: async () => undefined }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(TravelMatrixError);
    if (!(error instanceof TravelMatrixError)) return;
    expect(error.message).toMatch(/\(2 attempts of a 2×2 request\)\.$/);
    expect(error.detail).toMatch(/2 attempts of a 2×2 request: no answer within 100 ms$/);
    expect(signals).toHaveLength(2);
  });
});
