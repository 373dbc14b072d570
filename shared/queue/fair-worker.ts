import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { type SlotOutcome, type TenantWorkerSlots, workInTenantSlot } from "#shared/domain/fairness/worker-slots";
import { sqsClient } from "#shared/queue/sqs";
import { workerSlotStore } from "#shared/store/worker-slot-store";

/**
 * Per-tenant fairness for any SQS worker (shared/domain/fairness/worker-slots.ts): a pool names the
 * worker, the queue a deferred message goes to and the slots each tenant may hold. A message of a
 * tenant at its cap is sent to that queue (its own, or a spillover queue read by fewer workers) with a
 * delay and `deferrals` counted up in its body, then acknowledged (a new message, so a deferral never
 * counts toward the dead-letter queue's maxReceiveCount).
 *
 * A worker adopts it in three steps: give its messages an optional `deferrals` number, pass each
 * message to `workFairly` with its tenant and a key naming the work (a redelivery must use the same
 * key), and give its Lambda a cap (`tenantSlotCap` of the event source's maximum concurrency).
 */
export interface FairPool {
  /** Names the pool's slot items (`WORKSLOTS#<name>`). */
  name: string;
  /** Where a deferred message is sent. */
  queueUrl: string;
  slots: TenantWorkerSlots;
}

/**
 * A pool over the table: at most `cap` slots per tenant, each leased for `leaseSeconds` (longer than
 * the worker's timeout). A worker that found a tenant at its cap remembers it for `atCapMemoryMs`
 * and defers that tenant's next messages without asking the table: passing over a flooding
 * tenant's backlog then costs one send per message, so another tenant's message behind it is reached
 * sooner. The memory only ever defers the tenant that was at its cap, by at most that long.
 */
export function fairPool(name: string, queueUrl: string, cap: number, leaseSeconds: number, atCapMemoryMs = 2000): FairPool {
  const store = workerSlotStore(name, cap, leaseSeconds);
  const atCapUntil = new Map<string, number>();
  return {
    name,
    queueUrl,
    slots: {
      take: async (tenantId, workKey) => {
        if ((atCapUntil.get(tenantId) ?? 0) > Date.now()) return false;
        const taken = await store.take(tenantId, workKey);
        if (taken) atCapUntil.delete(tenantId);
        else atCapUntil.set(tenantId, Date.now() + atCapMemoryMs);
        return taken;
      },
      release: store.release,
    },
  };
}

export async function workFairly<Body extends object, T>(
  pool: FairPool,
  message: { tenantId: string; workKey: string; body: Body },
  work: () => Promise<T>,
): Promise<SlotOutcome<T>> {
  const counted = (message.body as { deferrals?: unknown }).deferrals;
  const deferrals = typeof counted === "number" ? counted : 0;
  return workInTenantSlot(pool.slots, { tenantId: message.tenantId, workKey: message.workKey, deferrals }, work, async (delaySeconds) => {
    await sqsClient().send(
      new SendMessageCommand({
        QueueUrl: pool.queueUrl,
        MessageBody: JSON.stringify({ ...message.body, deferrals: deferrals + 1 }),
        DelaySeconds: delaySeconds,
      }),
    );
  });
}
