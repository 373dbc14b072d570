import { TooManyRequestsError } from "#shared/domain/errors";

/**
 * The cap on an organization's active runs (queued or running), as pure rules. The store keeps one
 * item per organization whose `runs` map holds one lease per active run, keyed by the run:
 *
 * - taking a slot is one conditional write (`the run holds one already OR size(runs) < max`), so
 *   parallel ticks and API calls can never exceed the cap;
 * - releasing is removing the run's key: doing it twice (a redelivered message) changes nothing;
 * - a lease that ends (its worker crashed on the last delivery, the message went to the dead-letter
 *   queue) is removed by the next taker that finds the cap full, so no slot leaks for longer than
 *   the lease.
 */
export type ActiveRunLeases = Record<string, number>;

/** A scheduled run is one schedule's slot; an on-demand run is its result. */
export function scheduleRunKey(scheduleId: string, slot: string): string {
  return `S#${scheduleId}#${slot}`;
}

export function onDemandRunKey(resultId: string): string {
  return `R#${resultId}`;
}

export function leaseEnd(now: Date, leaseSeconds: number): number {
  return now.getTime() + leaseSeconds * 1000;
}

/** The runs whose lease has ended by `now` (they count no more and may be removed). */
export function endedLeases(runs: ActiveRunLeases, now: Date): string[] {
  return Object.entries(runs)
    .filter(([, until]) => until <= now.getTime())
    .map(([key]) => key);
}

/** Whether a run may take a slot: it holds one already, or fewer than `max` leases are live. */
export function mayTakeSlot(runs: ActiveRunLeases, runKey: string, max: number, now: Date): boolean {
  if (runKey in runs) return true;
  return Object.keys(runs).length - endedLeases(runs, now).length < max;
}

/**
 * What one write does to take slots for several runs of one organization at once (the tick takes
 * every run of an organization in a page with one conditional update): `held` runs hold a slot
 * already and keep it (renewed), `taken` are the first of the others that fit under `max` once the
 * `ended` leases (not among the runs asked for) are removed; the rest get none. The write that
 * applies it must find the map as it was read (its size, the ended leases unchanged, the held runs
 * present, the taken absent), so the cap holds against concurrent takers. `removeAtMost` bounds
 * the removals of one write (DynamoDB's 4 KB per expression); the rest are removed by a later one.
 */
export function planSlotTake(
  runs: ActiveRunLeases,
  runKeys: readonly string[],
  max: number,
  now: Date,
  removeAtMost = Number.POSITIVE_INFINITY,
): { held: string[]; taken: string[]; ended: string[] } {
  const asked = new Set(runKeys);
  const ended = endedLeases(runs, now)
    .filter((run) => !asked.has(run))
    .slice(0, removeAtMost);
  const held = [...asked].filter((run) => run in runs);
  const room = Math.max(0, max - (Object.keys(runs).length - ended.length));
  const taken = [...asked].filter((run) => !(run in runs)).slice(0, room);
  return { held, taken, ended };
}

export function activeRunCapMessage(max: number): string {
  return `Your organization already has ${max} routing runs queued or running (the most it may have at once); try again when one has finished.`;
}

/** POST /routing/result over the cap. */
export class TooManyActiveRunsError extends TooManyRequestsError {
  constructor(max: number) {
    super(activeRunCapMessage(max), "run-429");
  }
}

/** logExecuted message of a scheduled run skipped for the cap. */
export function scheduledRunOverCapReason(max: number): string {
  return `Skipped: the organization already had ${max} routing runs queued or running (the most it may have at once).`;
}

/** Port over the store's slots (shared/store/active-run-store.ts), with the organization's cap (its plan's maxRunsQueued). */
export interface ActiveRunSlots {
  max(organizationId: string): Promise<number>;
  /** Takes (or keeps) the run's slot; false when the organization is at the cap. */
  take(organizationId: string, runKey: string): Promise<boolean>;
  /** Frees the run's slot; idempotent. */
  release(organizationId: string, runKey: string): Promise<void>;
}
