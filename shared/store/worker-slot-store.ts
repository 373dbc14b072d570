import type { TenantWorkerSlots } from "#shared/domain/fairness/worker-slots";
import { releaseLeaseSlot, takeLeaseSlot } from "#shared/store/active-run-store";
import { keys } from "#shared/store/keys";

/**
 * The per-tenant slots of one worker pool (shared/domain/fairness/worker-slots.ts): one item per
 * tenant and pool, `ORG#o` / `WORKSLOTS#<pool>`, whose `runs` map holds a lease end per message being
 * worked (the same lease map as the cap on active runs). A lease outlives the worker's timeout, so a
 * worker that crashed mid-message frees its slot within `leaseSeconds`.
 */
export function workerSlotStore(pool: string, cap: number, leaseSeconds: number, now: () => Date = () => new Date()): TenantWorkerSlots {
  return {
    take: (tenantId, workKey) => takeLeaseSlot(keys.workerSlots(tenantId, pool), "workerSlots", workKey, cap, now(), leaseSeconds),
    release: (tenantId, workKey) => releaseLeaseSlot(keys.workerSlots(tenantId, pool), workKey),
  };
}
