/**
 * Fair sharing of one pool of SQS workers between tenants, as pure rules. A pool (the run worker's
 * event source, with its maximum concurrency) serves every tenant from one queue in arrival order, so
 * a tenant that floods it would hold every worker and every other tenant's message would wait behind
 * its backlog. Each tenant may instead hold at most `tenantSlotCap(workers)` of the pool's workers at
 * once (a lease per message being worked, in the tenant's own item, taken by one conditional write);
 * a worker that receives a message of a tenant at its cap does not work it but sends it back to the
 * queue with a delay and takes the next message. With one worker kept from any single tenant, another
 * tenant's message waits at most for that one worker, never for the flooding tenant's backlog.
 */

/** The most workers of a pool of `workers` one tenant may hold: all but `reserved` (at least one). */
export function tenantSlotCap(workers: number, reserved = 1): number {
  return Math.max(1, Math.floor(workers) - reserved);
}

/**
 * Spillover at enqueue (AWS Builders' Library, "Avoiding insurmountable queue backlogs"): of `count`
 * new runs of a tenant that already has `activeBefore` runs queued or running, how many go to the
 * shared queue. Only up to its share of the workers; the rest go to the spillover queue, which only
 * `share` workers read. So the shared queue never holds more than a tenant's share of its runs, and a
 * free worker reaches another tenant's run after at most that many, instead of after the whole flood.
 */
export function sharedQueueRoom(activeBefore: number, count: number, share: number): number {
  return Math.max(0, Math.min(count, share - activeBefore));
}

/** SQS's longest message delay. */
export const MAX_DEFER_SECONDS = 900;

/**
 * How long a deferred message waits before a worker sees it again: `base` seconds, doubled with each
 * deferral of the same message (a tenant at its cap for long is polled less often), up to `max`
 * (default a minute, so the flooding tenant's own runs start soon after its slots free; never over
 * SQS's 15 minutes), with ±20 % jitter so the deferred messages of one flood do not come back together.
 */
export function deferralDelaySeconds(deferrals: number, base = 5, random: () => number = Math.random, max = 60): number {
  const ceiling = Math.min(MAX_DEFER_SECONDS, max);
  const exact = Math.min(ceiling, base * 2 ** Math.max(0, deferrals));
  return Math.max(1, Math.min(ceiling, Math.round(exact * (0.8 + 0.4 * random()))));
}

/** A pool's per-tenant slots (store: shared/store/worker-slot-store.ts). */
export interface TenantWorkerSlots {
  /** Takes (or keeps) a slot for `workKey`; false when the tenant holds its cap. */
  take(tenantId: string, workKey: string): Promise<boolean>;
  /** Frees the slot of `workKey`; idempotent. */
  release(tenantId: string, workKey: string): Promise<void>;
}

export type SlotOutcome<T> = { started: true; value: T } | { started: false; deferredForSeconds: number };

/**
 * Works one message in a slot of its tenant, releasing the slot however the work ends; or, when the
 * tenant holds its cap, defers the message (`defer` sends it back with the delay) without working it.
 */
export async function workInTenantSlot<T>(
  slots: TenantWorkerSlots,
  message: { tenantId: string; workKey: string; deferrals: number },
  work: () => Promise<T>,
  defer: (delaySeconds: number) => Promise<void>,
): Promise<SlotOutcome<T>> {
  if (!(await slots.take(message.tenantId, message.workKey))) {
    const delaySeconds = deferralDelaySeconds(message.deferrals);
    await defer(delaySeconds);
    return { started: false, deferredForSeconds: delaySeconds };
  }
  try {
    return { started: true, value: await work() };
  } finally {
    await slots.release(message.tenantId, message.workKey);
  }
}
