// Seeded pseudo-random numbers (mulberry32): the solver must be reproducible for a given seed.
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const item = items[i]!;
      items[i] = items[j]!;
      items[j] = item;
    }
    return items;
  }
}

/**
 * SISR's blinks: each insertion position tried is skipped with probability `rate`. Drawn as the geometric
 * gap to the next skip, so one random number per blink rather than one per position tried (cheaper: README,
 * "Constants and their measurements"); the skips follow the same Bernoulli process.
 */
export class Blinks {
  /** Positions still to try before the next one is skipped; -1 until the first is tried. */
  private left = -1;
  private readonly logKeep: number;

  constructor(
    private readonly random: Random,
    rate: number,
  ) {
    if (!(rate >= 0 && rate <= 1)) throw new RangeError(`blink rate must be within [0, 1], got ${rate}`);
    this.logKeep = Math.log1p(-rate);
  }

  /** Whether the position about to be tried is skipped. */
  skip(): boolean {
    if (this.left > 0) {
      this.left--;
      return false;
    }
    // The first draw waits for the first position tried: a search phase that never blinks (route
    // minimisation) draws the same random numbers as it would without blinks.
    const first = this.left < 0;
    this.left = this.gap();
    return first ? this.skip() : true;
  }

  /**
   * The same as `count` calls of `skip` (the same random numbers drawn, the same state after), for positions
   * known to be useless whether skipped or not; whether any of them was skipped.
   */
  skipMany(count: number): boolean {
    let skipped = false;
    while (count > 0) {
      if (this.left > 0) {
        const kept = Math.min(count, this.left);
        this.left -= kept;
        count -= kept;
      } else if (this.left < 0) {
        // The first draw, taken before the first position is tried (as in `skip`).
        this.left = this.gap();
      } else {
        this.left = this.gap();
        count--;
        skipped = true;
      }
    }
    return skipped;
  }

  /** Failures before the first success, geometric with success probability `rate` (never, at rate 0). */
  private gap(): number {
    return this.logKeep === 0 ? Infinity : Math.floor(Math.log(1 - this.random.next()) / this.logKeep);
  }
}
