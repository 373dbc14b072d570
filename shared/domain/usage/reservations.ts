/**
 * Caps that hold under concurrency: a metered amount (road-matrix elements, dollars, position
 * reports…) is *reserved* against its cap with one conditional write on the counter item before
 * the work it pays for starts, and *settled* after with what was really used. A check-then-charge
 * (read the month's total, run, add at the end) lets every concurrent run see the same total and all
 * pass; a reservation is decided by the counter item itself, so of N concurrent reservations only
 * those that fit are granted, whatever read consistency or index lag a store has.
 *
 * The store (shared/store/reservation-store.ts) implements the port for any counter attribute of any
 * item; a new metered cap names its counter and its cap and calls `reserve` / `settle`.
 */
export interface MeteredCounter {
  /** The counter item's key (from shared/store/keys.ts). */
  key: { PK: string; SK: string };
  /** The numeric attribute holding the amount used (reserved and settled). */
  attribute: string;
  /** Written on the item when it is created (e.g. `{ entity: "runSeconds" }`). */
  itemAttributes?: Record<string, string | number>;
}

export type ReservationOutcome = { granted: true } | { granted: false; used: number };

export interface ReservationStore {
  /**
   * Adds `amount` to the counter only if the result stays within `cap` (one conditional write);
   * refused: what the counter holds now (strongly consistent read).
   */
  reserve(counter: MeteredCounter, amount: number, cap: number): Promise<ReservationOutcome>;
  /** Replaces a reservation by what was used: adds `used - reserved` (never refused, may be negative). */
  settle(counter: MeteredCounter, reserved: number, used: number): Promise<void>;
}

/** Reserves against `cap` when there is one (undefined: unmetered, always granted). */
export async function reserveWithinCap(
  store: ReservationStore,
  counter: MeteredCounter,
  amount: number,
  cap: number | undefined,
): Promise<ReservationOutcome> {
  if (cap === undefined || amount <= 0) {
    if (amount > 0) await store.settle(counter, 0, amount);
    return { granted: true };
  }
  return store.reserve(counter, amount, cap);
}
