import { describe, expect, it } from "vitest";
import { Blinks, Random } from "#shared/routing/random";

describe("blinks (SISR's skipped insertion positions)", () => {
  it("skip a share of the positions tried close to the rate, with gaps as a per-position coin would leave", () => {
    const blinks = new Blinks(new Random(7), 0.01);
    const tries = 200_000;
    let skips = 0;
    let adjacent = 0;
    let previous = false;
    for (let i = 0; i < tries; i++) {
      const skip = blinks.skip();
      if (skip) skips++;
      if (skip && previous) adjacent++;
      previous = skip;
    }
    // Binomial(200,000, 0.01): 2,000 ± 44.5; ±5 standard deviations.
    expect(skips).toBeGreaterThan(2000 - 225);
    expect(skips).toBeLessThan(2000 + 225);
    // Two skips in a row as often as a coin per position gives (1 % of skips), not never (a fixed stride would).
    expect(adjacent).toBeGreaterThan(5);
    expect(adjacent).toBeLessThan(60);
  });

  it("draw no random number before the first position is tried, and refuse a rate outside [0, 1]", () => {
    const shared = new Random(3);
    new Blinks(shared, 0.01);
    expect(shared.next()).toBe(new Random(3).next());
    expect(() => new Blinks(new Random(1), -0.1)).toThrow(RangeError);
    expect(() => new Blinks(new Random(1), Number.NaN)).toThrow(RangeError);
  });

  it("never skip at rate 0 and always at rate 1", () => {
    const never = new Blinks(new Random(1), 0);
    const always = new Blinks(new Random(1), 1);
    for (let i = 0; i < 1000; i++) {
      expect(never.skip()).toBe(false);
      expect(always.skip()).toBe(true);
    }
  });
});
